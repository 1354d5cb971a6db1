// Review of issue 26 (commit cd4d341, src/broker/placement.ts): a broker decides once whether its
// engine is managed by a cluster. Before, Broker.start set the engine's mode itself after the
// caller's engine options (`managedPartitions: options.cluster !== undefined`), so a single
// broker's engine always opened its directory's topics. Now the mode is EngineOptions.cluster,
// which BrokerOptions.engine (an EngineOptions) may carry too: ClusterPlacement overrides it, but
// SinglePlacement's engineOptions is `{}`, so a policy given in the engine options reaches a
// single broker's engine, which then opens none of its registry's topics and serves nothing.
import { afterEach, expect, test } from 'bun:test';
import { Broker } from '../../src/broker/broker.ts';
import type { BrokerOptions } from '../../src/broker/broker-options.ts';
import { type ClusterPolicy, Engine } from '../../src/engine/index.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { tempDir } from '../support/temp-dir.ts';

/** A cluster's word as a harness might pass it through the engine options: it leads everything. */
const LEADS_EVERYTHING: ClusterPolicy = {
  checkLeadership: () => {},
  followersOf: () => new Set(),
  incarnationState: async () => 'live',
  writerLiveness: { liveWriterIds: () => new Set(), picks: () => false },
  adopting: () => false,
};

const running: Broker[] = [];
afterEach(async () => {
  for (const broker of running.splice(0)) await broker.stop().catch(() => {});
});

test("a single broker (no WAL store) serves its directory's topics whatever cluster policy its engine options carry", async () => {
  const directory = tempDir();
  const before = await Engine.open({ directory, log: { flush: { kind: 'none' } } });
  before.createTopic('orders', { partitions: 1 });
  await before.produce('orders', [{ key: 'k', value: 'v' }]);
  await before.close();

  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    clock: new ManualClock(),
    // As a JavaScript caller could pass it: the options' type leaves `cluster` out.
    engine: { directory, log: { flush: { kind: 'none' } }, cluster: LEADS_EVERYTHING } as BrokerOptions['engine'],
  });
  running.push(broker);

  // f78bbe2: the broker's own `managedPartitions: false` won, the topic is served. HEAD: managed, nothing opened.
  expect(broker.context.engine.serves('orders', 0)).toBe(true);
  expect(broker.context.engine.logEndOffset('orders', 0)).toBe(1);
});
