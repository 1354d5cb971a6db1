// Review of fb962d6 ([K3] "kept only when it spans the tier's end"): when the tier's objects cannot be
// read, #tierStart (partition-host.ts) falls back to the tier record's start LS with mustReach TE. A
// follower's local retention now deletes below TE as it reads it [D1], so its log starts somewhere in
// (LS, TE]: it spans TE, yet the check compares its start with LS, so the promotion drops the log and
// rebuilds from LS out of the chain, which WAL GC has collected below TE (GI1): the rebuild fails
// three times and the partition stays unled, though the follower held everything it needed.
import { expect, test } from 'bun:test';
import { keepOnlyWhatTheChainProves } from '../../src/cluster/kept-log.ts';
import { rebuildFromTierAndChain } from '../../src/partition/rebuild.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { tempDir } from '../support/temp-dir.ts';
import { collectPrefix, writeWalChain } from '../support/wal-chain.ts';

test('with the tier unreadable, a promoted follower whose log spans the tier end is kept', async () => {
  const store = new MemoryStore();
  const written = await writeWalChain(store, [5, 5, 5]); // offsets 0..4, 5..9, 10..14
  const reader = new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants: () => true }, { clock: written.clock, random: new SeededRandom(1) });
  const follower = PartitionLog.open(tempDir());
  // The follower's log after its local retention deleted below TE = 10: [7, 15).
  await rebuildFromTierAndChain(reader, follower, written.chain, written.topicId, async () => ({ offset: 7, epochs: [], producers: null }));
  expect([follower.logStartOffset, follower.logEndOffset]).toEqual([7, 15]);
  // GC collected every frame below TE (GI1).
  await collectPrefix(store, written.chain[0]!, 5);
  await collectPrefix(store, written.chain[1]!, 5);

  // Promotion with the tier's objects unreadable: partition-host's fallback start, LS = 3 (tier retention), mustReach TE = 10.
  const fallback = async () => ({ offset: 3, epochs: [], producers: null, mustReach: 10 });
  const promoted = await rebuildFromTierAndChain(reader, follower, written.chain, written.topicId, fallback, undefined, true);
  expect(promoted.kept).toBe(true);
  expect([follower.logStartOffset, follower.logEndOffset]).toEqual([7, 15]);
});

// Simulation seed 250306 (test/sim/found-bugs.test.ts): the same fallback, with the chain holding no
// frame at or past the kept log's start (GC took everything below TE, and nothing was written
// since). The rebuild counted only the chain as proof of what the log may hold, from LS: the kept
// log [LS, TE) was cut back to LS, and the new leader wrote new records over acknowledged offsets
// the tier still held. The tier's end is proof too, as when the tier can be read.
test('with the tier unreadable, a kept log up to the tier end is not cut back when GC took every frame below it', async () => {
  const store = new MemoryStore();
  const written = await writeWalChain(store, [5, 5]); // offsets 0..4, 5..9
  const reader = new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants: () => true }, { clock: written.clock, random: new SeededRandom(1) });
  const follower = PartitionLog.open(tempDir());
  await rebuildFromTierAndChain(reader, follower, written.chain, written.topicId, async () => null);
  expect([follower.logStartOffset, follower.logEndOffset]).toEqual([0, 10]);
  await collectPrefix(store, written.chain[0]!, 5); // TE = 10: GC took every frame (GI1); the seals stay
  await collectPrefix(store, written.chain[1]!, 5);

  const fallback = async () => ({ offset: 0, epochs: [], producers: null, mustReach: 10 });
  const promoted = await rebuildFromTierAndChain(reader, follower, written.chain, written.topicId, fallback, undefined, true);
  expect(promoted.kept).toBe(true);
  expect(promoted.chainEnd).toBe(10);
  keepOnlyWhatTheChainProves(follower, promoted.chainEnd, () => {}); // as partition-host does after a kept rebuild
  expect([follower.logStartOffset, follower.logEndOffset]).toEqual([0, 10]);
});
