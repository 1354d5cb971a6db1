// Review check of the cluster producer-id blocks (compare-and-swap in the control records): brokers
// reserving at once never share a block, and a reservation whose write landed but whose answer was
// lost fails (InitProducerId answers an error) and leaves its block unused: the next reservation
// takes the one after it, never the same one again.
import { expect, test } from 'bun:test';
import { ProducerIds, ControlProducerIdBlocks } from '../../src/broker/producers.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import { MemoryStore } from '../../src/store/memory.ts';

const BROKERS = 4;
const IDS_PER_BROKER = 2500; // each broker goes through several blocks

test('producer ids from brokers sharing the control records are unique, through lost compare-and-swap answers', async () => {
  const store = new MemoryStore();
  const brokers = Array.from({ length: BROKERS }, () => new ProducerIds(new ControlProducerIdBlocks(new ControlStore(store, 'cluster'))));
  const ids: number[] = [];
  let failures = 0;
  await Promise.all(
    brokers.map(async (broker, b) => {
      for (let i = 0; i < IDS_PER_BROKER; i++) {
        // Now and then a reservation's write lands and its answer is lost.
        if (i % 700 === b) store.injectFault({ operation: 'put', kind: 'Timeout', afterEffect: true, keyPrefix: 'cluster/control/' });
        try {
          ids.push(await broker.allocate());
        } catch {
          failures++;
          i--; // the client retries InitProducerId
        }
      }
    }),
  );
  expect(failures).toBeGreaterThan(0);
  expect(ids.length).toBe(BROKERS * IDS_PER_BROKER);
  expect(new Set(ids).size).toBe(ids.length);
});
