// Review of fb962d6 ([K3] "kept only when it spans the tier's end"): with nothing tiered (no tier, a
// topic with remote.storage.enable off, or nothing copied yet) the rebuild starts at 0 (startOf gives
// null). A promoted follower whose retention.* moved its log start above 0 (as its leader's did) is
// now "not kept", yet its log is not started over either (start null, first attempt): it is kept in
// all but name. The frames below its end are then not fetched (fetchFrom is its end), so onFrame never
// sees them, and the rebuild reports a settled prefix [K6] of streams "holding no frame at or above 0"
// that hold its whole log. The leader writes it into the partition record; the next takeover by a
// broker with an empty disk skips those streams (and does not seal them) and cannot rebuild.
import { expect, test } from 'bun:test';
import { rebuildFromTierAndChain } from '../../src/partition/rebuild.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { tempDir } from '../support/temp-dir.ts';
import { writeWalChain } from '../support/wal-chain.ts';

test('a promoted follower whose log starts above 0 with nothing tiered is kept, and settles no stream that holds its records', async () => {
  const store = new MemoryStore();
  const written = await writeWalChain(store, [5, 5, 5]); // offsets 0..4, 5..9, 10..14
  const reader = new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants: () => true }, { clock: written.clock, random: new SeededRandom(1) });
  const follower = PartitionLog.open(tempDir());
  // The follower's log after retention.* deleted its first segments: [5, 15).
  await rebuildFromTierAndChain(reader, follower, written.chain, written.topicId, async () => ({ offset: 5, epochs: [], producers: null }));
  expect([follower.logStartOffset, follower.logEndOffset]).toEqual([5, 15]);

  const nothingTiered = async () => null;
  const promoted = await rebuildFromTierAndChain(reader, follower, written.chain.slice(0, 2), written.topicId, nothingTiered, undefined, true);
  // Streams 0 and 1 hold offsets 0..9: no prefix of them holds "no frame at or above 0".
  expect(promoted.settled.count).toBe(0);
  expect(promoted.kept).toBe(true); // partition-host then applies keepOnlyWhatTheChainProves, and says so

  // What the next takeover, on an empty disk, makes of the prefix the promoted leader noted.
  const fresh = PartitionLog.open(tempDir());
  await rebuildFromTierAndChain(reader, fresh, written.chain, written.topicId, nothingTiered, undefined, false, promoted.settled);
  expect([fresh.logStartOffset, fresh.logEndOffset]).toEqual([0, 15]);
});
