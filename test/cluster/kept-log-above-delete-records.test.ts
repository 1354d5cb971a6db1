// Review of fb962d6 ([K3] "kept only when it spans the tier's end"): a follower whose log was behind
// a DeleteRecords start L that lies above the tier's end TE starts over at L (applyRecordedLogStart),
// so its log starts above TE. Nothing of [TE, L) is served to anyone (DeleteRecords), so its log
// leaves no hole; yet the promotion now drops it and rebuilds from TE out of the chain.
import { expect, test } from 'bun:test';
import { applyRecordedLogStart } from '../../src/cluster/recorded-log-start.ts';
import { rebuildFromChain, rebuildFromTierAndChain } from '../../src/partition/rebuild.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { tempDir } from '../support/temp-dir.ts';
import { writeWalChain } from '../support/wal-chain.ts';

test('a promoted follower whose log starts at a DeleteRecords start above the tier end is kept', async () => {
  const store = new MemoryStore();
  const written = await writeWalChain(store, [5, 5, 5]); // offsets 0..4, 5..9, 10..14
  const reader = new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants: () => true }, { clock: written.clock, random: new SeededRandom(1) });
  const follower = PartitionLog.open(tempDir());
  await rebuildFromTierAndChain(reader, follower, written.chain.slice(0, 2), written.topicId, async () => ({ offset: 5, epochs: [], producers: null }));
  expect(follower.logEndOffset).toBe(10);
  applyRecordedLogStart(follower, 12); // DeleteRecords to 12 on the leader, past the follower's end: it starts over there
  await rebuildFromChain(reader, follower, written.chain, written.topicId); // the tail brings 12..14
  expect([follower.logStartOffset, follower.logEndOffset, follower.deletedBeforeOffset]).toEqual([12, 15, 12]);

  const promoted = await rebuildFromTierAndChain(reader, follower, written.chain, written.topicId, async () => ({ offset: 10, epochs: [], producers: null }), undefined, true);
  expect(promoted.kept).toBe(true);
  expect([follower.logStartOffset, follower.logEndOffset]).toEqual([12, 15]);
});
