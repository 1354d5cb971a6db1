// docs/tier-protocol.md [K3]: a promoted follower keeps its local log only when it spans the tier's
// end TE. Simulation seed 200858 (test/sim/found-bugs.test.ts): a follower's local retention had
// taken segments not yet tiered, so its log started far above TE; the promotion kept it, and the
// new leader served the tier up to TE, then nothing, then its log: acknowledged records between were
// gone from every read although the chain still held them.
import { expect, test } from 'bun:test';
import { rebuildFromTierAndChain } from '../../src/partition/rebuild.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { tempDir } from '../support/temp-dir.ts';
import { writeWalChain } from '../support/wal-chain.ts';

function valuesOf(log: PartitionLog): string[] {
  return log.read(log.logStartOffset, 1 << 20).batches.flatMap((batch) => [...batch.records()].map((record) => new TextDecoder().decode(record.value!)));
}

test('a kept log that starts above the tier end is rebuilt from the tier end, with nothing missing', async () => {
  const store = new MemoryStore();
  const written = await writeWalChain(store, [5, 5, 5]); // offsets 0..4, 5..9, 10..14
  const reader = new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants: () => true }, { clock: written.clock, random: new SeededRandom(1) });
  const follower = PartitionLog.open(tempDir());
  await rebuildFromTierAndChain(reader, follower, written.chain, written.topicId, async () => ({ offset: 10, epochs: [], producers: null }));
  expect([follower.logStartOffset, follower.logEndOffset]).toEqual([10, 15]); // what retention left of the follower's log

  const promoted = await rebuildFromTierAndChain(reader, follower, written.chain, written.topicId, async () => ({ offset: 5, epochs: [], producers: null }), undefined, true);
  expect(promoted.kept).toBe(false);
  expect([follower.logStartOffset, follower.logEndOffset]).toEqual([5, 15]);
  expect(valuesOf(follower)).toEqual(['r5', 'r6', 'r7', 'r8', 'r9', 'r10', 'r11', 'r12', 'r13', 'r14']);
});

test('a kept log that spans the tier end is kept', async () => {
  const store = new MemoryStore();
  const written = await writeWalChain(store, [5, 5]);
  const reader = new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants: () => true }, { clock: written.clock, random: new SeededRandom(1) });
  const follower = PartitionLog.open(tempDir());
  await rebuildFromTierAndChain(reader, follower, written.chain, written.topicId, async () => ({ offset: 3, epochs: [], producers: null }));
  const promoted = await rebuildFromTierAndChain(reader, follower, written.chain, written.topicId, async () => ({ offset: 6, epochs: [], producers: null }), undefined, true);
  expect(promoted.kept).toBe(true);
  expect([follower.logStartOffset, follower.logEndOffset]).toEqual([3, 10]);
});
