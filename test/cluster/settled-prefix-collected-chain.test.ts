// Adversarial review (review6) of [K6] (the settled prefix) and [K2] (a rebuild from the tier's
// end and the chain's floors). The test here FAILED when written; its comment says how.
import { expect, test } from 'bun:test';
import { rebuildFromTierAndChain } from '../../src/partition/rebuild.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { tempDir } from '../support/temp-dir.ts';
import { collectPrefix, writeWalChain } from '../support/wal-chain.ts';

/** Two sealed streams of five one-record objects each: offsets 0..4, then 5..9. */
const PER_STREAM = 5;
/** The tier record's start (retention's), where PartitionHost.#tierStart starts a rebuild while the tier's objects cannot be read. */
const RECORD_START = 3;

// Finding (the unit form of test/cluster/tier-down-collected-chain.test.ts): the tier's end is 10
// and GC collected every data object of both streams ([G4] allows it: all their frames are below
// 10). A rebuild started below that end -- the tier-unreadable fallback starts at the record's
// start -- sees no frame at all, so nothing tells it the chain held [3, 10): it returns a log
// ending at 3 and reports both streams settled from 3, which [K6] defines as "hold no frame of the
// incarnation at or above 3". Offsets 3..9 were acknowledged. docs/tier-protocol.md says such a
// rebuild "fails its restarts until the tier reads again"; it does not, it succeeds.
// Failed before TierStart.mustReach (the fallback now names the tiered end it must reach): the rebuild resolves (log end 3, settled { count: 2, fromOffset: 3 }) instead of rejecting.
test('a rebuild below the tiered end over a wholly collected chain does not succeed with a short log', async () => {
  const store = new MemoryStore();
  const written = await writeWalChain(store, [PER_STREAM, PER_STREAM]);
  for (const stream of written.chain) await collectPrefix(store, stream, PER_STREAM); // each stream: only its seal left
  const reader = new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants: () => true }, { clock: written.clock, random: new SeededRandom(1) });
  const log = PartitionLog.open(tempDir());
  // The fallback knows the tier record's end (the record reads; the tier's objects do not): the log must reach it.
  const rebuilt = rebuildFromTierAndChain(reader, log, written.chain, written.topicId, async () => ({ offset: RECORD_START, epochs: [], producers: null, mustReach: 2 * PER_STREAM }));
  await expect(rebuilt).rejects.toThrow();
});
