// Review finding r7 (fixed: the open waits for room again, bounded by RESHIP_ROOM_WAIT_MS, so it
// neither hangs nor buffers the log; see open-during-outage-reship.test.ts). Since 6387996 reshipUnshipped hands the whole unshipped suffix to the
// WAL writer at open without waiting for room in its upload buffer, on the ground that "the suffix
// is bounded by what the earlier run could hold unshipped (its own buffer)". That holds only when
// the earlier runs wrote this writer's WAL. A partition the WAL's checkpoint does not know counts
// as unshipped from offset 0 (ferry.ts #openTopic: `shipped.get(...) ?? 0`): a data directory used
// without a WAL and then opened with one, or opened under another writer id or prefix. Its whole
// local log (gigabytes) is then read into memory and queued for upload in one synchronous loop,
// far past maxBufferedBytes: memory grows with the log, not with the buffer, and the open can run
// the process out of memory. Before 6387996 the re-ship waited for room (wal.reserve) and held at
// most a buffer's worth, but that wait hung an open during a store outage (open-during-outage-
// reship.test.ts). A fix needs both: bounded memory and no open that waits on the store, e.g. the
// re-ship continues after the open with the partition's new appends queued behind it (a gate that
// producers wait on with their request timeout), or the open bounds its wait and fails in one line.
// Severity: medium (unbounded memory at open on a non-default path: enabling a WAL on an existing
// data directory, a changed writer id). Below: uploads are held back until the test lets them go,
// and the WAL buffer at the moment the open finishes is far above its bound (3 MiB in a 256 KiB buffer).
import { expect, test } from 'bun:test';
import { Engine } from '../../src/engine/index.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { settle } from '../support/settle.ts';
import { tempDir } from '../support/temp-dir.ts';

const KiB = 1024;
const BUFFER_BYTES = 256 * KiB;
const RECORD_BYTES = 16 * KiB;
const RECORDS = 200; // about 3 MiB
/** Slack over the buffer bound: one re-ship step (a read of the local log) may go past it. */
const RESHIP_STEP_BYTES = 1024 * KiB;

/** A store whose puts wait until `release` lets every waiting one through. */
function heldStore(inner: MemoryStore): { store: ObjectStore; release(): void } {
  const waiting: (() => void)[] = [];
  const store = new Proxy(inner, {
    get(target, property, receiver) {
      if (property === 'put')
        return async (...args: Parameters<ObjectStore['put']>) => {
          await new Promise<void>((resolve) => waiting.push(resolve));
          return target.put(...args);
        };
      const value = Reflect.get(target, property, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as unknown as ObjectStore;
  return {
    store,
    release: () => {
      for (const resolve of waiting.splice(0)) resolve();
    },
  };
}

test('a WAL opened on a log it never shipped re-ships it within the upload buffer', async () => {
  const directory = tempDir();
  const clock = new ManualClock();
  const first = await Engine.open({ directory, clock, log: { flush: { kind: 'none' } } }); // no WAL yet
  first.createTopic('t');
  for (let i = 0; i < RECORDS; i++) await first.produce('t', [{ value: 'x'.repeat(RECORD_BYTES) }], { acks: 1 });
  await first.close();

  const held = heldStore(new MemoryStore());
  let bufferedAtOpenBytes = -1;
  let ferry: Engine | null = null;
  const opening = Engine.open({
    directory,
    clock,
    log: { flush: { kind: 'none' } },
    wal: { store: held.store, writerId: 'w', config: { uploadBytes: BUFFER_BYTES / 4, maxBufferedBytes: BUFFER_BYTES } },
  });
  opening.then(
    (opened) => {
      ferry = opened;
      bufferedAtOpenBytes = opened.wal!.stats().bufferedBytes;
    },
    () => {},
  );
  for (let step = 0; step < 10_000 && ferry === null; step++) {
    await settle();
    held.release(); // the store answers, one round of uploads at a time
  }
  expect(ferry).not.toBeNull();
  expect(bufferedAtOpenBytes).toBeLessThanOrEqual(BUFFER_BYTES + RESHIP_STEP_BYTES);
  const closing = ferry!.close();
  for (let step = 0; step < 1_000; step++) {
    await settle();
    held.release();
    clock.advance(1000);
  }
  await closing;
}, 60_000);
