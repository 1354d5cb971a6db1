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

/**
 * A topic of `created` partitions; `lateWrite` lands its write, then a grow to 5 is answered, then
 * `lateWrite`'s answer comes back: the broker's view shows 5 throughout.
 */
async function answeredAfterGrow(created: number, lateWrite: (node: ReturnType<typeof testClusterNode>) => Promise<unknown>): Promise<void> {
  const { store, held } = answerHeldStore(new MemoryStore(), 'c/control/topics/t');
  const node = testClusterNode({ store, clock: new ManualClock(), nodeId: 1, scanIntervalMs: 3_600_000 });
  await node.start();
  try {
    await node.createTopic('t', created);
    held.armed = true;
    const late = lateWrite(node);
    await held.landed.promise; // the late write took effect; its answer is on its way
    await node.createPartitions('t', 5); // answered: the client was told the topic has 5
    expect(node.topics().get('t')?.partitions).toBe(5);
    held.release();
    await late;
    await settle();
    expect(node.topics().get('t')?.partitions).toBe(5); // was `created` or 3: Metadata shrank the topic after the grow was answered
  } finally {
    node.stop();
  }
}

test('an AlterConfigs answered after a CreatePartitions it preceded does not show the count from before the grow', () =>
  answeredAfterGrow(2, (node) => node.alterTopicConfig('t', [{ name: 'retention.ms', op: 'set', value: '60000' }])));

test('a grow to 3 answered after a grow to 5 it preceded does not show 3', () => answeredAfterGrow(1, (node) => node.createPartitions('t', 3)));
