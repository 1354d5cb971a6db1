// A rebuild reads each stream of the chain from its WAL floor (docs/tier-protocol.md [K2]): once
// GC deleted a covered prefix, the log starts at the tier's end and takes the rest from the
// floors; a GC that races the rebuild makes it start over from the newer tiered end.
import { expect, test } from 'bun:test';
import { REBUILD_RESTARTS_MAX, rebuildFromTierAndChain, WalPrefixCollectedError } from '../../src/partition/rebuild.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { GetOptions, GetResult } from '../../src/store/object-store.ts';
import type { TierStart } from '../../src/tier/tier-start.ts';
import type { Clock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { walObjectKey } from '../../src/wal/keys.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { tempDir } from '../support/temp-dir.ts';
import { bytesFrom, collectPrefix, writeWalChain } from '../support/wal-chain.ts';

/** Two sealed streams of five objects each: offsets 0..4, then 5..9. */
const PER_STREAM = [5, 5];

function startAt(offset: number): TierStart {
  return { offset, epochs: [], producers: null };
}

function readerOf(store: MemoryStore, clock: Clock): WalReader {
  return new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants: () => true }, { clock, random: new SeededRandom(1) });
}

/** The log a rebuild of the whole chain makes, before anything is collected. */
async function fullRebuild(store: MemoryStore, written: Awaited<ReturnType<typeof writeWalChain>>): Promise<PartitionLog> {
  const log = PartitionLog.open(tempDir());
  await rebuildFromTierAndChain(readerOf(store, written.clock), log, written.chain, written.topicId, async () => null);
  return log;
}

/** Records the sequence of every WAL object GET. */
class GetRecordingStore extends MemoryStore {
  readonly gets: string[] = [];
  override async get(key: string, options?: GetOptions): Promise<GetResult> {
    this.gets.push(key);
    return super.get(key, options);
  }
}

test("a chain whose streams lost a covered prefix rebuilds from the tier's end and the floors", async () => {
  const store = new GetRecordingStore();
  const written = await writeWalChain(store, PER_STREAM);
  const expected = await fullRebuild(store, written);
  const [a, b] = written.chain;
  await collectPrefix(store, a!, 5); // all of the first stream's data: only its seal is left [GI2]
  await collectPrefix(store, b!, 2); // offsets 5 and 6: the tier covers up to 7
  const log = PartitionLog.open(tempDir());
  store.gets.length = 0;
  const result = await rebuildFromTierAndChain(readerOf(store, written.clock), log, written.chain, written.topicId, async () => startAt(7));
  expect(result.restarts).toBe(0);
  // The read-ahead starts at each floor: no GET of a collected object.
  const collected = [...[0, 1, 2, 3, 4].map((s) => walObjectKey('', a!, s)), ...[0, 1].map((s) => walObjectKey('', b!, s))];
  expect(store.gets.filter((key) => collected.includes(key))).toEqual([]);
  expect(store.gets).toContain(walObjectKey('', b!, 4));
  expect(result.objectsRead).toBe(3);
  expect([log.logStartOffset, log.logEndOffset]).toEqual([7, 10]);
  expect(bytesFrom(log, 7)).toEqual(bytesFrom(expected, 7));
  await Promise.all([log.close(), expected.close()]);
});

/** A store where GC runs at the first GET of one key: it deletes `collect` and moves the tier's end. */
class RacingGcStore extends MemoryStore {
  raced = false;
  trigger = '';
  onRace: () => Promise<void> = async () => {};

  override async get(key: string, options?: GetOptions): Promise<GetResult> {
    if (key === this.trigger && !this.raced) {
      this.raced = true;
      await this.onRace();
    }
    return super.get(key, options);
  }
}

test('a GC that deletes objects above the floor during the rebuild makes it start over from the newer tiered end', async () => {
  const store = new RacingGcStore();
  const written = await writeWalChain(store, PER_STREAM);
  const expected = await fullRebuild(store, written);
  const [a, b] = written.chain;
  await collectPrefix(store, a!, 3); // the tier covers 0..2
  let tieredEnd = 3;
  store.trigger = walObjectKey('', a!, 3); // the rebuild LISTed floor 3; GC takes 3 and 4 of A, 0 and 1 of B before the GET
  store.onRace = async () => {
    tieredEnd = 7;
    await collectPrefix(store, a!, 5);
    await collectPrefix(store, b!, 2);
  };
  const said: string[] = [];
  const log = PartitionLog.open(tempDir());
  const result = await rebuildFromTierAndChain(
    readerOf(store, written.clock),
    log,
    written.chain,
    written.topicId,
    async () => startAt(tieredEnd),
    (m) => said.push(m),
  );
  expect(store.raced).toBe(true);
  expect(result.restarts).toBe(1);
  expect(said.join('\n')).toContain('raced WAL GC');
  expect([log.logStartOffset, log.logEndOffset]).toEqual([7, 10]);
  expect(bytesFrom(log, 7)).toEqual(bytesFrom(expected, 7));
  await Promise.all([log.close(), expected.close()]);
});

test("a GC between the tier read and the LIST (the first frame lies above the log's end) starts over too, a bounded number of times", async () => {
  const store = new MemoryStore();
  const written = await writeWalChain(store, PER_STREAM);
  const [a, b] = written.chain;
  await collectPrefix(store, a!, 5);
  await collectPrefix(store, b!, 2);
  const ends = [3, 7]; // the first tier read is older than the GC
  const log = PartitionLog.open(tempDir());
  const result = await rebuildFromTierAndChain(readerOf(store, written.clock), log, written.chain, written.topicId, async () => startAt(ends.shift() ?? 7));
  expect(result.restarts).toBe(1);
  expect([log.logStartOffset, log.logEndOffset]).toEqual([7, 10]);

  // A tier that never covers the hole: not a race but a chain that lacks offsets; the rebuild gives up.
  let reads = 0;
  const stuck = PartitionLog.open(tempDir());
  const failed = rebuildFromTierAndChain(readerOf(store, written.clock), stuck, written.chain, written.topicId, async () => (reads++, startAt(3)));
  await expect(failed).rejects.toBeInstanceOf(WalPrefixCollectedError);
  expect(reads).toBe(REBUILD_RESTARTS_MAX + 1);
  await Promise.all([log.close(), stuck.close()]);
});
