// [F1] from the floor (docs/tier-protocol.md [G4]): once GC has deleted a prefix of a stream, a
// successor seals the stream at its end, not in the hole at 0, and that seal fences the writer.
import { expect, test } from 'bun:test';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ListOptions, ListPage } from '../../src/store/object-store.ts';
import { systemClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { type StreamId, walObjectKey } from '../../src/wal/keys.ts';
import { streamFloor } from '../../src/wal/floor.ts';
import { ensureSealed, sealStream } from '../../src/wal/seal.ts';
import { DEFAULT_WAL_WRITER_CONFIG, WalWriter } from '../../src/wal/writer.ts';
import { batchOf } from '../support/batches.ts';
import { idOf } from '../support/topic-ids.ts';

const STREAM: StreamId = { writerId: 'leader-1', epoch: 2 };
const OBJECTS = 5;
const COLLECTED = 3;

async function liveWriterWithCollectedPrefix(store: MemoryStore): Promise<{ wal: WalWriter; append(offset: number): Promise<void> }> {
  const wal = new WalWriter(store, { ...DEFAULT_WAL_WRITER_CONFIG, uploadBytes: 1, maxInFlight: 1, prefix: 'p', stream: STREAM }, { clock: systemClock, random: new SeededRandom(1) });
  const append = (offset: number) => wal.append({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: offset, lastOffset: offset, data: batchOf(`r${offset}`) });
  for (let offset = 0; offset < OBJECTS; offset++) await append(offset);
  await wal.flush();
  for (let sequence = 0; sequence < COLLECTED; sequence++) await store.delete(walObjectKey('p', STREAM, sequence)); // GC, oldest first [G4]
  return { wal, append };
}

test('a stream whose prefix was collected is sealed at its end, and the seal fences its live writer', async () => {
  const store = new MemoryStore();
  const { append } = await liveWriterWithCollectedPrefix(store);
  expect(await streamFloor(store, 'p', STREAM)).toBe(COLLECTED);
  const sealed = await sealStream(store, 'p', STREAM, { writerId: 'leader-2', nowMs: 0 });
  expect(sealed).toEqual({ sealSequence: OBJECTS, sealedHere: true });
  await expect(append(OBJECTS)).rejects.toThrow(/fenced/i); // its next object meets the seal
});

test('ensureSealed finds the seal above a collected prefix, and seals at the end when there is none', async () => {
  const store = new MemoryStore();
  await liveWriterWithCollectedPrefix(store);
  expect(await ensureSealed(store, 'p', STREAM, { writerId: 'leader-2', nowMs: 0 })).toBe(OBJECTS);
  expect(await ensureSealed(store, 'p', STREAM, { writerId: 'leader-3', nowMs: 0 })).toBe(OBJECTS);
  expect(await streamFloor(store, 'p', STREAM)).toBe(COLLECTED);
});

test('an empty stream has floor 0 and is sealed at 0', async () => {
  const store = new MemoryStore();
  expect(await streamFloor(store, 'p', STREAM)).toBe(0);
  expect((await sealStream(store, 'p', STREAM, { writerId: 'leader-2', nowMs: 0 })).sealSequence).toBe(0);
});

/** A store whose LISTs come two keys a page, with GC deleting a stretch of the stream after the first page of the first LIST. */
class PagedRacingGcStore extends MemoryStore {
  onFirstPage: (() => Promise<void>) | null = null;
  override async list(prefix: string, options?: ListOptions): Promise<ListPage> {
    const page = await super.list(prefix, { ...options, maxKeys: 2 });
    const race = this.onFirstPage;
    if (race !== null && options?.token === undefined) {
      this.onFirstPage = null;
      await race();
    }
    return page;
  }
}

test('a seal is not put in a hole GC made between the pages of its LIST (below objects the writer acknowledged)', async () => {
  const store = new PagedRacingGcStore();
  const wal = new WalWriter(store, { ...DEFAULT_WAL_WRITER_CONFIG, uploadBytes: 1, maxInFlight: 1, prefix: 'p', stream: STREAM }, { clock: systemClock, random: new SeededRandom(1) });
  for (let offset = 0; offset < 10; offset++) await wal.append({ topic: 't', topicId: idOf('t'), partition: 0, leaderEpoch: 0, baseOffset: offset, lastOffset: offset, data: batchOf(`r${offset}`) });
  await wal.flush();
  for (let sequence = 0; sequence < 2; sequence++) await store.delete(walObjectKey('p', STREAM, sequence));
  // The first page lists 2 and 3; then GC deletes 2..6; the next pages list 7, 8, 9: a hole at 4 that is no end.
  store.onFirstPage = async () => {
    for (let sequence = 2; sequence < 7; sequence++) await store.delete(walObjectKey('p', STREAM, sequence));
  };
  expect(await ensureSealed(store, 'p', STREAM, { writerId: 'leader-2', nowMs: 0 })).toBe(10);
  expect(await streamFloor(store, 'p', STREAM)).toBe(7);
});
