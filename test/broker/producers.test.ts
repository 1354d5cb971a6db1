import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { ControlProducerIdBlocks, FileProducerIdBlocks, ProducerIds } from '../../src/broker/producers.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { tempDir } from '../support/temp-dir.ts';

// Sequences are checked by the partition's log (test/log/producer-state.test.ts); a retried
// duplicate answers what the original's durability answers (test/engine/idempotence.test.ts).

test("a single broker's ids are unique per broker and survive a restart without reuse", async () => {
  const directory = tempDir();
  const a = new ProducerIds(new FileProducerIdBlocks(directory, 1));
  const first = [await a.allocate(), await a.allocate()];
  const again = await new ProducerIds(new FileProducerIdBlocks(directory, 1)).allocate();
  expect(first[0]).toBe(2 ** 32);
  expect(again).toBeGreaterThan(first[1]!);
  expect(await new ProducerIds(new FileProducerIdBlocks(tempDir(), 2)).allocate()).toBe(2 * 2 ** 32);
});

test('cluster brokers allocating at once from the control record never hand out one id twice', async () => {
  const control = new ControlStore(new MemoryStore(), 'c');
  const brokers = Array.from({ length: 3 }, () => new ProducerIds(new ControlProducerIdBlocks(control)));
  const ids = (await Promise.all(brokers.flatMap((broker) => Array.from({ length: 1500 }, () => broker.allocate())))).sort((a, b) => a - b);
  expect(new Set(ids).size).toBe(ids.length); // 4,500 ids across blocks of 1,000: several races for the record
});
