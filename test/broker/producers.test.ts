import { expect, test } from 'bun:test';
import { ProducerIds } from '../../src/broker/producers.ts';
import { tempDir } from '../support/temp-dir.ts';

// Sequences are checked by the partition's log (test/log/producer-state.test.ts); a retried
// duplicate answers what the original's durability answers (test/engine/idempotence.test.ts).

test('ids are unique per broker and survive a restart without reuse', () => {
  const directory = tempDir();
  const a = new ProducerIds(directory, 1);
  const first = [a.allocate(), a.allocate()];
  const again = new ProducerIds(directory, 1).allocate();
  expect(first[0]).toBe(2 ** 32);
  expect(again).toBeGreaterThan(first[1]!);
  expect(new ProducerIds(tempDir(), 2).allocate()).toBe(2 * 2 ** 32);
});
