// Producer ids stay exact integers (adversarial review r7). Outside cluster mode a node's ids start
// at nodeId x 2^32; for a node id of 2^21 or more that is past 2^53, where a JavaScript number no
// longer holds consecutive integers: every InitProducerId of such a node answered the same id, and
// two idempotent producers sharing an id and epoch collide in the partitions' sequence checks (a
// batch of one taken for a duplicate of the other's is acknowledged and never written). Node ids
// are int32 in Kafka, so such a node id is valid there; Ferry refuses it at start instead.
import { expect, test } from 'bun:test';
import { ControlProducerIdBlocks, FILE_PRODUCER_IDS_NODE_ID_MAX, FileProducerIdBlocks, ProducerIds } from '../../src/broker/producers.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { tempDir } from '../support/temp-dir.ts';

test('the highest node id accepted hands out distinct ids; a higher one is refused', async () => {
  const ids = new ProducerIds(new FileProducerIdBlocks(tempDir(), FILE_PRODUCER_IDS_NODE_ID_MAX));
  const got = [await ids.allocate(), await ids.allocate(), await ids.allocate()];
  for (const id of got) expect(Number.isSafeInteger(id)).toBe(true);
  expect(new Set(got).size).toBe(got.length);
  expect(() => new FileProducerIdBlocks(tempDir(), 2 ** 22)).toThrow(/node id/);
});

test('a cluster record whose next id is past exact integers is refused, not handed out', async () => {
  const control = new ControlStore(new MemoryStore(), 'cluster');
  await control.create('producer-ids', { next: 2 ** 54 });
  await expect(new ProducerIds(new ControlProducerIdBlocks(control)).allocate()).rejects.toThrow(/exact/);
});
