// Adversarial review of issue 11, guarantee 2 (GI2/[F1]: "a seal never lands below an object the
// writer acknowledged") and 4 (a live leader judged dead must not go on acknowledging). Failed on
// main at 8c03420; fixed by floor marks ([G4]) and void seals ([F2]).
//
// What it shows: a seal put at a slot that was free when the successor listed the stream, but that
// the live writer filled AND WAL GC collected before the put arrived, lands in the collected prefix.
// sealStream (src/wal/seal.ts) lists once (listSequencesToSeal: no hole here, so no HEAD either),
// takes the first free slot f above the floor, and puts the seal at f with If-None-Match. Without GC
// a slot taken since the listing fails that put and the seal moves up ([F3]); with GC the slot is
// taken and then deleted again ([G4] deletes from the floor up while each object has a successor and
// its frames are below TE), so the put succeeds at f, below every object the writer put since. Then:
// - readers start at the floor, which is now the seal: the stream ends there, and the objects above
//   it, acknowledged with acks=all (every lower sequence was durable, [W5]), are never read: lost;
// - the writer is not fenced: its next put, at a free slot above, succeeds, so it goes on
//   acknowledging into a stream every reader takes as sealed.
// The window is the seal's put being slow (S3 503 SlowDown retried by the client, a process pause)
// while the taken-over leader is alive (a lease lapse, a wrong [K1] exit) and its own collector runs.
// [F1]'s defence against GC covers only a multi-page LIST; nothing covers the slot going stale.
// Severity: data loss (acknowledged records) and a split brain for acks=all.
import { expect, test } from 'bun:test';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore, PutOptions, PutResult } from '../../src/store/object-store.ts';
import { ManualClock, systemClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { WalCollector } from '../../src/wal-gc/collector.ts';
import { type StreamId, walObjectKey } from '../../src/wal/keys.ts';
import { sealStream } from '../../src/wal/seal.ts';
import { DEFAULT_WAL_WRITER_CONFIG, WalWriter } from '../../src/wal/writer.ts';
import { batchOf } from '../support/batches.ts';
import { PREFIX, TOPIC, TOPIC_ID, World, WRITER } from '../wal-gc/support.ts';

const STREAM: StreamId = { writerId: WRITER, epoch: 2 };

/** `inner`, where `meanwhile` runs after the seal put to `key` was sent and before the store takes it (a slow, retried PUT). */
function slowPut(inner: MemoryStore, key: string, meanwhile: () => Promise<void>): ObjectStore {
  const put = async (k: string, body: Uint8Array, options?: PutOptions): Promise<PutResult> => {
    if (k === key) await meanwhile();
    return inner.put(k, body, options);
  };
  return new Proxy(inner, {
    get: (target, name) => {
      if (name === 'put') return put;
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as ObjectStore;
}

/** The race: a successor's seal of STREAM, slow, while the live writer writes 5..9 and its collector takes 0..8. */
async function sealRacingWriterAndGc() {
  const store = new MemoryStore();
  const writer = new WalWriter(store, { ...DEFAULT_WAL_WRITER_CONFIG, uploadBytes: 1, maxInFlight: 1, prefix: PREFIX, stream: STREAM }, { clock: systemClock, random: new SeededRandom(1) });
  const append = (offset: number) => writer.append({ topic: TOPIC, topicId: TOPIC_ID, partition: 0, leaderEpoch: 0, baseOffset: offset, lastOffset: offset, data: batchOf(`r${offset}`) });
  for (let offset = 0; offset < 5; offset++) await append(offset); // objects 0..4, acknowledged
  const world = new World();
  world.lead(Number.POSITIVE_INFINITY); // RF 1: no follower holds GC
  const collector = new WalCollector({ store, prefix: PREFIX, writerId: WRITER, currentEpoch: () => STREAM.epoch, coverage: world, clock: new ManualClock(), random: new SeededRandom(2) });
  // A successor lists (objects 0..4: the first free slot is 5) and sends its seal; the PUT is slow.
  let acknowledgedUpTo = -1;
  const successorView = slowPut(store, walObjectKey(PREFIX, STREAM, 5), async () => {
    for (let offset = 5; offset < 10; offset++) await append(offset); // the live writer goes on: objects 5..9, acknowledged
    acknowledgedUpTo = 9;
    world.setTieredEnd(9); // its tierer tiers offsets 0..8
    await collector.collect(); // and its collector takes objects 0..8 (9 is the highest: it stays)
  });
  const { sealSequence } = await sealStream(successorView, PREFIX, STREAM, { writerId: 'broker-2', nowMs: 0 });
  expect(acknowledgedUpTo).toBe(9);
  return { sealSequence, append };
}

test('a seal whose slot the live writer filled and GC collected meanwhile still lands above every acknowledged object', async () => {
  const { sealSequence } = await sealRacingWriterAndGc();
  expect(sealSequence).toBeGreaterThan(9); // FAILS: 5, below the acknowledged object 9
});

test('a writer whose stream was sealed acknowledges nothing more', async () => {
  const { append } = await sealRacingWriterAndGc();
  let acknowledged = false;
  await append(10).then(
    () => (acknowledged = true),
    () => {},
  );
  expect(acknowledged).toBe(false); // FAILS: object 10 lands at a free slot above the seal, and is acknowledged
});
