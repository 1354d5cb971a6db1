// What a restarting leader learns its earlier streams hold (shippedEnds): objects written after
// the shipped checkpoint may have been collected by WAL GC (docs/tier-protocol.md [G4]). A missing
// object below the floor is covered by the tier, not the stream's end: the ends come from the
// objects still there above it.
import { expect, test } from 'bun:test';
import { MemoryStore } from '../../src/store/memory.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { shippedEnds } from '../../src/wal/shipped.ts';
import { partitionKey } from '../../src/wal/writer.ts';
import { collectPrefix, writeWalChain } from '../support/wal-chain.ts';

test('the ends after a checkpoint are read from the floor when GC collected the objects after it', async () => {
  const store = new MemoryStore();
  const { chain, topicId, clock } = await writeWalChain(store, [6, 3]); // offsets 0..5, then 6..8
  const [a, b] = chain;
  const checkpoint = { epoch: a!.epoch, sequence: 1, ends: [[topicId, 0, 2] as const] }; // saved after object 1
  await collectPrefix(store, a!, 4); // objects 0..3 of the first stream: the tier covers offsets 0..3
  await collectPrefix(store, b!, 1); // and the second stream's first object, offset 6
  const reader = new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix: '', wants: () => false }, { clock, random: new SeededRandom(1) });
  const ends = await shippedEnds(reader, 'w', b!.epoch + 1, checkpoint);
  expect(ends.get(partitionKey(topicId, 0))).toBe(9);
});
