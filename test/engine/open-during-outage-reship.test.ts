// Review finding (fixed; it was low-medium): with WAL uploads retried without a bound, an engine opened
// during a store outage whose local log holds an unshipped suffix larger than the WAL's upload
// buffer (maxBufferedBytes) never finishes opening: reshipUnshipped waits for room (wal.reserve,
// no signal) that only a successful upload frees. Before the unbounded retries the writer failed
// and the open threw. The broker CLI installs its SIGTERM handler before it starts, so a broker
// stuck here ignores SIGTERM until the store answers again. Open should not wait on the store for
// room (re-ship past the buffer bound, or give the wait a bound and fail the open in one line).
// How likely: a run's unshipped suffix is bounded by its own buffer, so the second run here has a
// smaller one; the same run with the default buffer opens at once (checked), which shows the wait
// for room is what hangs. The re-ship no longer waits for room.
import { expect, test } from 'bun:test';
import { Ferry } from '../../src/engine/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { settle } from '../support/settle.ts';
import { tempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

/** Moves the clock on by `ms` in one-second steps (retries, the close's wait for the store), then waits for `promise`'s real I/O. */
async function stepThen<T>(clock: ManualClock, ms: number, promise: Promise<T>): Promise<T> {
  for (let elapsedMs = 0; elapsedMs < ms; elapsedMs += 1000) {
    clock.advance(1000);
    await settle();
  }
  return promise;
}

const KiB = 1024;
/** The upload buffer of the second run: smaller than the suffix the first run could not ship. */
const BUFFER_BYTES = 256 * KiB;
const RECORD_BYTES = 16 * KiB;
const RECORDS = 200; // about 3 MiB, several re-ship steps of 1 MiB
const OUTAGE_PUTS = 1_000_000;

test('an engine opened during a store outage with a large unshipped suffix finishes opening', async () => {
  const clock = new ManualClock();
  const store = new MemoryStore();
  const directory = tempDir();
  store.injectFault({ operation: 'put', kind: 'Unavailable', count: OUTAGE_PUTS, keyPrefix: 'wal/' });
  const first = await Ferry.open({ directory, clock, log: { flush: { kind: 'none' } }, wal: { store, writerId: 'w' } });
  first.createTopic('t');
  for (let i = 0; i < RECORDS; i++) await first.produce('t', [{ value: 'x'.repeat(RECORD_BYTES) }], { acks: 1 });
  await stepThen(clock, 60_000, first.close()); // gives up on the store after its wait
  let opened = false;
  const second = Ferry.open({ directory, clock, log: { flush: { kind: 'none' } }, wal: { store, writerId: 'w', config: { uploadBytes: BUFFER_BYTES / 4, maxBufferedBytes: BUFFER_BYTES } } });
  second.then(() => (opened = true), () => (opened = true));
  for (let elapsedMs = 0; elapsedMs < 120_000 && !opened; elapsedMs += 1000) {
    clock.advance(1000);
    await settle();
  }
  await until(() => opened, 'the second open', 5_000);
  expect(opened).toBe(true);
  await stepThen(clock, 60_000, (await second).close());
}, 60_000);
