// (From the review of issue 12.) CreatePartitions in a cluster under races: concurrent grows
// through two brokers, and a grow racing a delete and re-create of the topic. Held when written.
import { startClusterBroker } from '../support/cluster-brokers.ts';
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import type { Broker } from '../../src/broker/broker.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import type { TopicRecord } from '../../src/cluster/control-records.ts';
import { isFerryError } from '../../src/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(60_000);
const running: Broker[] = [];
afterEach(async () => {
  for (const broker of running.splice(0)) await broker.stop().catch(() => {});
});

const start = (store: ObjectStore, nodeId: number): Promise<Broker> => startClusterBroker(store, nodeId, running);

const outcome = (promise: Promise<unknown>) =>
  promise.then(
    () => 'ok',
    (error) => (isFerryError(error) ? error.kind : String(error)),
  );

test('concurrent grows to 3 and 5 through two brokers: the topic ends at 5, every partition led and taking acks=all produces, old records intact', async () => {
  const store = new MemoryStore();
  const brokers = [await start(store, 1), await start(store, 2)];
  await brokers[0]!.context.topology.createTopic('t', 1);
  await until(() => brokers.some((b) => b.context.engine.leads('t', 0)), 'partition 0 led');
  const leader0 = brokers.find((b) => b.context.engine.leads('t', 0))!;
  await leader0.context.engine.produce('t', [{ value: 'before' }], { partition: 0, acks: 'all' });
  const results = await Promise.all([outcome(brokers[0]!.context.topology.createPartitions('t', 3, false)), outcome(brokers[1]!.context.topology.createPartitions('t', 5, false))]);
  // Either both succeed (3 first) or the grow to 3 finds 5 already: INVALID_PARTITIONS.
  expect([
    ['ok', 'ok'],
    ['InvalidPartitions', 'ok'],
  ]).toContainEqual(results);
  expect((await new ControlStore(store, '').read<TopicRecord>('topics/t'))!.value.partitions).toBe(5);
  await until(() => [0, 1, 2, 3, 4].every((p) => brokers.some((b) => b.context.engine.leads('t', p))), 'all five partitions led', 30_000);
  for (let p = 0; p < 5; p++) {
    const leader = brokers.find((b) => b.context.engine.leads('t', p))!;
    const [produced] = await leader.context.engine.produce('t', [{ value: `p${p}` }], { partition: p, acks: 'all' });
    expect(produced).toEqual({ partition: p, offset: p === 0 ? 1 : 0 });
  }
  expect(leader0.context.engine.fetch('t', 0, 0).batches[0]!.baseOffset).toBe(0);
});

test('a grow racing a delete and re-create: never a partition count the new incarnation was not asked for, and its partitions all led', async () => {
  const store = new MemoryStore();
  const brokers = [await start(store, 1), await start(store, 2)];
  await brokers[0]!.context.topology.createTopic('t', 2);
  await until(() => [0, 1].every((p) => brokers.some((b) => b.context.engine.leads('t', p))), 'both partitions led');
  const grow = outcome(brokers[1]!.context.topology.createPartitions('t', 4, false));
  const recreate = (async () => {
    await brokers[0]!.context.topology.deleteTopic('t');
    for (let i = 0; i < 200; i++) {
      const created = await outcome(
        brokers[0]!.context.topology.createTopic('t', 1).then((ok) => {
          if (!ok) throw new Error('exists');
        }),
      );
      if (created === 'ok') return;
      await Bun.sleep(10);
    }
    throw new Error('could not re-create t');
  })();
  const [grew] = await Promise.all([grow, recreate]);
  const record = (await new ControlStore(store, '').read<TopicRecord>('topics/t'))!.value;
  // Grown before the delete (the new one has 1), or after the re-create (4), or refused.
  expect(grew === 'ok' ? [1, 4] : [1]).toContain(record.partitions);
  await until(() => [...Array(record.partitions).keys()].every((p) => brokers.some((b) => b.context.engine.leads('t', p))), 'every partition of the new incarnation led', 30_000);
});
