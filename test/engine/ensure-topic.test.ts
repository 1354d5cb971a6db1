import { expect, test } from 'bun:test';
import { Ferry, isFerryError } from '../../src/ferry/index.ts';
import { tempDir } from '../support/temp-dir.ts';

test('ensureTopic creates a missing topic, and returns an existing one unchanged across a reopen', async () => {
  const directory = tempDir();
  const ferry = await Ferry.open({ directory });
  const created = ferry.ensureTopic('orders', { partitions: 3 });
  expect(created.partitions).toBe(3);
  await ferry.produce('orders', [{ value: 'one' }], { partition: 1 });
  expect(ferry.ensureTopic('orders', { partitions: 3 })).toEqual(created);
  await ferry.close();

  const again = await Ferry.open({ directory });
  // Options apply only to a creation: the existing topic keeps its 3 partitions and its record.
  expect(again.ensureTopic('orders', { partitions: 5 })).toEqual(created);
  expect(again.fetch('orders', 1, 0).highWatermark).toBe(1);
  expect(again.topics()).toHaveLength(1);
  await again.close();
});

test('ensureTopic refuses a bad name as createTopic does', async () => {
  const ferry = await Ferry.open({ directory: tempDir() });
  let caught: unknown;
  try {
    ferry.ensureTopic('a/b');
  } catch (error) {
    caught = error;
  }
  expect(isFerryError(caught, 'InvalidArgument')).toBe(true);
  await ferry.close();
});
