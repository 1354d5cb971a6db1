// ensureSealed looks for an existing seal among a stream's top maxInFlight objects only, because a
// fenced writer can land at most maxInFlight - 1 objects above a seal (src/wal/seal.ts). That holds
// only if the writer never uploads further ahead of its durable sequence than that: one whose
// object at the seal's slot is backing off after a retriable fault must not go on landing later
// objects without bound, or the next successor misses the seal and writes a second one.
import { expect, test } from 'bun:test';
import { StoreError } from '../../src/store/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore, PutOptions } from '../../src/store/object-store.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { decodeWalObject } from '../../src/wal/format.ts';
import { type StreamId, walObjectKey } from '../../src/wal/keys.ts';
import { ensureSealed, listSequences, sealStream } from '../../src/wal/seal.ts';
import { DEFAULT_WAL_WRITER_CONFIG, WalWriter } from '../../src/wal/writer.ts';
import { batchOf } from '../support/batches.ts';
import { settle } from '../support/settle.ts';
import { idOf } from '../support/topic-ids.ts';

const STREAM: StreamId = { writerId: 'leader-1', epoch: 1 };

test('a writer backing off on one object lands at most maxInFlight - 1 objects above it: a later successor finds the one seal', async () => {
  const inner = new MemoryStore();
  const firstKey = walObjectKey('p', STREAM, 0);
  let failedOnce = false;
  const put = async (key: string, body: Uint8Array, options?: PutOptions) => {
    if (key === firstKey && !failedOnce) {
      failedOnce = true;
      throw new StoreError('Unavailable', 'injected: one 503', { key });
    }
    return inner.put(key, body, options);
  };
  const store = new Proxy(inner, {
    get: (target, name) => (name === 'put' ? put : typeof Reflect.get(target, name) === 'function' ? Reflect.get(target, name).bind(target) : Reflect.get(target, name)),
  }) as ObjectStore;
  const clock = new ManualClock();
  const wal = new WalWriter(store, { ...DEFAULT_WAL_WRITER_CONFIG, uploadBytes: 1, prefix: 'p', stream: STREAM }, { clock, random: new SeededRandom(1) });
  const acknowledged: number[] = [];
  for (let offset = 0; offset < 30; offset++) {
    wal.append({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: offset, lastOffset: offset, data: batchOf(`r${offset}`) }).then(
      () => acknowledged.push(offset),
      () => {},
    );
    if (offset === 0) {
      await settle(); // object 0 met its 503 and backs off (the clock stands still)
      expect((await sealStream(inner, 'p', STREAM, { writerId: 'leader-2', nowMs: 0 })).sealSequence).toBe(0); // a successor seals slot 0
    }
    await settle();
  }
  const above = Math.max(...(await listSequences(inner, 'p', STREAM)));
  expect(above).toBeLessThanOrEqual(DEFAULT_WAL_WRITER_CONFIG.maxInFlight - 1);
  expect(await ensureSealed(inner, 'p', STREAM, { writerId: 'leader-3', nowMs: 0 })).toBe(0);
  const seals: number[] = [];
  for (const sequence of await listSequences(inner, 'p', STREAM)) if (decodeWalObject((await inner.get(walObjectKey('p', STREAM, sequence))).body).header.kind === 'seal') seals.push(sequence);
  expect(seals).toEqual([0]);
  clock.advance(10_000);
  await settle(20);
  expect(wal.failure?.kind).toBe('Fenced');
  expect(acknowledged).toEqual([]);
});
