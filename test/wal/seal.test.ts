// Sealing a stream (docs/wal-protocol.md [F1]-[F4]): two successors racing for one stream
// leave one seal, and the one that lost the race learns it.
import { expect, test } from 'bun:test';
import { MemoryStore } from '../../src/store/memory.ts';
import { systemClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { concatBytes } from '../../src/util/bytes.ts';
import { decodeWalObject, WalObjectBuilder } from '../../src/wal/format.ts';
import { type StreamId, walObjectKey } from '../../src/wal/keys.ts';
import { ensureSealed, listSequences, sealStream } from '../../src/wal/seal.ts';
import { DEFAULT_WAL_WRITER_CONFIG, WalWriter } from '../../src/wal/writer.ts';
import { batchOf } from '../support/batches.ts';
import { idOf } from '../support/topic-ids.ts';

const STREAM: StreamId = { writerId: 'leader-1', epoch: 3 };

/** A stream of `objects` data objects, written by a real writer. */
async function streamOf(store: MemoryStore, objects: number): Promise<void> {
  const wal = new WalWriter(store, { ...DEFAULT_WAL_WRITER_CONFIG, uploadBytes: 1, maxInFlight: 1, prefix: 'p', stream: STREAM }, { clock: systemClock, random: new SeededRandom(1) });
  for (let offset = 0; offset < objects; offset++)
    await wal.append({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: offset, lastOffset: offset, data: batchOf(`r${offset}`) });
  await wal.flush();
}

async function seals(store: MemoryStore): Promise<number[]> {
  const sequences = [...(await listSequences(store, 'p', STREAM))].sort((a, b) => a - b);
  const found: number[] = [];
  for (const sequence of sequences) if (decodeWalObject((await store.get(walObjectKey('p', STREAM, sequence))).body).header.kind === 'seal') found.push(sequence);
  return found;
}

test('two successors sealing one stream at once write one seal; the loser is told (finding 9)', async () => {
  for (const seed of [1, 2, 3, 4, 5]) {
    const store = new MemoryStore({ latency: 's3-express', seed });
    await streamOf(store, 3);
    const [b, c] = await Promise.all([sealStream(store, 'p', STREAM, { writerId: 'leader-2', nowMs: 0 }), sealStream(store, 'p', STREAM, { writerId: 'leader-3', nowMs: 0 })]);
    expect(await seals(store)).toEqual([3]);
    expect([b.sealSequence, c.sealSequence]).toEqual([3, 3]);
    expect([b.sealedHere, c.sealedHere].sort()).toEqual([false, true]);
  }
});

test('a seal is written above objects the predecessor put in between, and ensureSealed finds an existing one', async () => {
  const store = new MemoryStore();
  await streamOf(store, 2);
  const first = await sealStream(store, 'p', STREAM, { writerId: 'leader-2', nowMs: 0 });
  expect(first).toEqual({ sealSequence: 2, sealedHere: true });
  expect(await ensureSealed(store, 'p', STREAM, { writerId: 'leader-3', nowMs: 0 })).toBe(2);
  expect(await seals(store)).toEqual([2]);
});

test('a stream whose fenced writer landed objects above the seal is not sealed a second time (finding 9)', async () => {
  const store = new MemoryStore();
  await streamOf(store, 3);
  expect((await sealStream(store, 'p', STREAM, { writerId: 'leader-2', nowMs: 0 })).sealSequence).toBe(3);
  // An upload the fenced writer had in flight lands above the seal [W6].
  const builder = new WalObjectBuilder({ kind: 'data', writerId: STREAM.writerId, epoch: STREAM.epoch, sequence: 4, createdMs: 0 });
  builder.addFrame({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: 3, lastOffset: 3, data: batchOf('late') });
  await store.put(walObjectKey('p', STREAM, 4), concatBytes(builder.finish()), { ifNoneMatch: '*' });
  expect(await ensureSealed(store, 'p', STREAM, { writerId: 'leader-3', nowMs: 0 })).toBe(3);
  expect(await seals(store)).toEqual([3]);
});
