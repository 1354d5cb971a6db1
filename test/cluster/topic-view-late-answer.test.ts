// Review of ccb74c5 ([L8]: a topic's count only grows in a broker's view). The scan and the topic
// check no longer take a grown count back, but the writes of this broker itself still do: an
// AlterConfigs (or a smaller CreatePartitions) whose compare-and-swap landed before a grow, and
// whose answer came back after it (src/sim/store.ts controlWriteDelays: a write's answer delayed
// on its way back), notes the record it wrote, with the count from before the grow. Metadata then
// answers the old count after the CreatePartitions was answered, until the next scan or check.
import { expect, test } from 'bun:test';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore, PutOptions } from '../../src/store/object-store.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { testClusterNode } from '../support/cluster-node.ts';

/** A store whose next conditional write of `key` takes effect at once but answers only when `release` is called. */
function answerHeldStore(inner: MemoryStore, key: string) {
  const held = { armed: false, release: () => {}, landed: Promise.withResolvers<void>() };
  const store = new Proxy(inner, {
    get(target, name) {
      if (name === 'put')
        return async (k: string, body: Uint8Array, options?: PutOptions) => {
          const result = await target.put(k, body, options);
          if (held.armed && k === key && options?.ifMatch !== undefined) {
            held.armed = false;
            const answer = Promise.withResolvers<void>();
            held.release = answer.resolve;
            held.landed.resolve();
            await answer.promise;
          }
          return result;
        };
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as ObjectStore;
  return { store, held };
}

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

test('an AlterConfigs answered after a CreatePartitions it preceded does not show the count from before the grow', async () => {
  const inner = new MemoryStore();
  const { store, held } = answerHeldStore(inner, 'c/control/topics/t');
  const clock = new ManualClock();
  const node = testClusterNode({ store, clock, nodeId: 1, scanIntervalMs: 3_600_000 });
  await node.start();
  try {
    await node.createTopic('t', 2);
    held.armed = true;
    const altered = node.alterTopicConfig('t', [{ name: 'retention.ms', op: 'set', value: '60000' }]);
    await held.landed.promise; // the alteration's write took effect; its answer is on its way
    await node.createPartitions('t', 5); // answered: the client was told the topic has 5
    expect(node.topics().get('t')?.partitions).toBe(5);
    held.release();
    await altered;
    await settle();
    expect(node.topics().get('t')?.partitions).toBe(5); // was 2: Metadata shrank the topic after the grow was answered
  } finally {
    node.stop();
  }
});

test('a grow to 3 answered after a grow to 5 it preceded does not show 3', async () => {
  const inner = new MemoryStore();
  const { store, held } = answerHeldStore(inner, 'c/control/topics/t');
  const clock = new ManualClock();
  const node = testClusterNode({ store, clock, nodeId: 1, scanIntervalMs: 3_600_000 });
  await node.start();
  try {
    await node.createTopic('t', 1);
    held.armed = true;
    const toThree = node.createPartitions('t', 3);
    await held.landed.promise;
    await node.createPartitions('t', 5);
    held.release();
    await toThree;
    expect(node.topics().get('t')?.partitions).toBe(5); // was 3
  } finally {
    node.stop();
  }
});
