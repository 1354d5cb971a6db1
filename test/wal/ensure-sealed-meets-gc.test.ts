// Adversarial review of issue 11, guarantee 2 ("a seal racing GC's delete of the floor object").
// Failed on main at 8c03420; fixed: an object gone during the search is data GC collected (src/wal/seal.ts kindUnlessGone).
//
// What it shows: ensureSealed (src/wal/seal.ts) lists the stream (listSequencesToSeal), then looks
// for an existing seal among the top objects, GETting each header from the highest down to the
// floor (kindOf). WAL GC deletes from the floor up meanwhile (the writer id's own collector, a
// previous process of the same node id, or another broker's orphan collector [G1]); the GET of an
// object GC just deleted throws NotFound, and ensureSealed throws instead of going on. Every caller
// fails with it: Ferry.open (#closeEarlierStreams -> sealEarlierEpochs: the engine does not start),
// a takeover's [C4] seal (PartitionHost.adopt: the adoption fails, retried at the next scan). A
// deleted floor object is below the first free slot and so not the seal: it can be skipped.
// Severity: unavailability (a failed start or adoption; transient).
import { expect, test } from 'bun:test';
import { MemoryStore } from '../../src/store/memory.ts';
import type { GetOptions, GetResult, ObjectStore } from '../../src/store/object-store.ts';
import { systemClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { type StreamId, walObjectKey } from '../../src/wal/keys.ts';
import { ensureSealed } from '../../src/wal/seal.ts';
import { DEFAULT_WAL_WRITER_CONFIG, WalWriter } from '../../src/wal/writer.ts';
import { batchOf } from '../support/batches.ts';
import { idOf } from '../support/topic-ids.ts';

const STREAM: StreamId = { writerId: 'leader-1', epoch: 3 };

/** `inner`, where a collector deletes object `sequence` (the floor) just before the sealer's GET of it arrives. */
function collectedBeforeGet(inner: MemoryStore, sequence: number): ObjectStore {
  const key = walObjectKey('p', STREAM, sequence);
  const get = async (k: string, options?: GetOptions): Promise<GetResult> => {
    if (k === key) await inner.delete(key); // GC [G4]: the floor object goes (its successor is present)
    return inner.get(k, options);
  };
  return new Proxy(inner, {
    get: (target, name) => {
      if (name === 'get') return get;
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as ObjectStore;
}

test('ensureSealed seals a stream whose floor object WAL GC deletes while it looks for a seal', async () => {
  const inner = new MemoryStore();
  const wal = new WalWriter(inner, { ...DEFAULT_WAL_WRITER_CONFIG, uploadBytes: 1, maxInFlight: 1, prefix: 'p', stream: STREAM }, { clock: systemClock, random: new SeededRandom(1) });
  for (let offset = 0; offset < 3; offset++) await wal.append({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: offset, lastOffset: offset, data: batchOf(`r${offset}`) });
  await wal.flush();
  // The writer died (objects 0, 1, 2, no seal). A successor seals; GC takes object 0 meanwhile.
  expect(await ensureSealed(collectedBeforeGet(inner, 0), 'p', STREAM, { writerId: 'leader-2', nowMs: 0 })).toBe(3); // FAILS: NotFound
});
