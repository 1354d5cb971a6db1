// A broker restarted (new process, new writer epoch) while its old process was only paused: two
// processes under one node id. The new one claims the partitions its record names, appending its
// stream to their chains [C3]. The old one, once resumed, must not go on serving them: a record
// whose chain ends in another stream is not led through this process's stream (L3), whatever
// node id it names; and it must not fight the new process for node 1 (each sealing the other's
// stream in turn, so that neither can acknowledge for long).
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import type { PartitionRecord } from '../../src/cluster/control-records.ts';
import { StoreError } from '../../src/store/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import type { StreamId } from '../../src/wal/keys.ts';
import { testClusterNode } from '../support/cluster-node.ts';
import { settle } from '../support/settle.ts';

function process(store: MemoryStore, clock: ManualClock, stream: StreamId, events: string[]) {
  const name = `epoch-${stream.epoch}`;
  return testClusterNode({
    store,
    clock,
    nodeId: 1,
    self: { stream },
    writer: { whenFailed: () => new Promise(() => {}), startNewEpoch: async () => ({ writerId: stream.writerId, epoch: stream.epoch + 10 }) },
    scanIntervalMs: 100_000,
    adopt: async (topic, partition) => void events.push(`${name} adopt ${topic}/${partition}`),
    release: async (topic, partition) => void events.push(`${name} release ${topic}/${partition}`),
  });
}

test('the old process of a restarted broker lets go of partitions the new process claimed, once it resumes', async () => {
  const store = new MemoryStore();
  const events: string[] = [];
  const oldClock = new ManualClock();
  const old = process(store, oldClock, { writerId: 'broker-1', epoch: 0 }, events);
  await old.start();
  await old.createTopic('t', 1);
  await old.scan();
  expect(events).toEqual(['epoch-0 adopt t/0']);
  // The old process is paused (its clock does not run for it); a new one starts with epoch 1.
  const fresh = process(store, new ManualClock(), { writerId: 'broker-1', epoch: 1 }, events);
  await fresh.start();
  const record = (await new ControlStore(store, 'c').read<PartitionRecord>('partitions/t/0'))!.value;
  expect(record.chain.map((s) => s.epoch)).toEqual([0, 1]);
  expect(events).toEqual(['epoch-0 adopt t/0', 'epoch-1 adopt t/0']);
  // The old process resumes: its lease lapsed meanwhile; it renews and scans before acknowledging.
  oldClock.advance(2000);
  await settle(50);
  await old.scan();
  expect(events).toContain('epoch-0 release t/0');
  // ... and it does not fight the new process for them (sealing its stream, claiming them back).
  const after = (await new ControlStore(store, 'c').read<PartitionRecord>('partitions/t/0'))!.value;
  expect(after.chain.map((s) => s.epoch)).toEqual([0, 1]);
  expect(old.leaseHeld()).toBe(false); // it acknowledges nothing: node 1 is the new process now
  old.stop();
  fresh.stop();
});

test('a renewal that landed but whose answer was lost is not taken for another process: the broker renews on and keeps its lease', async () => {
  const inner = new MemoryStore();
  const clock = new ManualClock();
  let loseNextAnswer = false;
  const store = new Proxy(inner, {
    get: (target, name) => {
      if (name === 'put') {
        return async (key: string, body: Uint8Array, options?: Parameters<MemoryStore['put']>[2]) => {
          const result = await inner.put(key, body, options);
          if (key === 'c/control/brokers/1' && loseNextAnswer) {
            loseNextAnswer = false;
            throw new StoreError('Timeout', 'injected: the answer was lost', { key });
          }
          return result;
        };
      }
      const value: unknown = Reflect.get(target, name, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as MemoryStore;
  const events: string[] = [];
  const node = process(store, clock, { writerId: 'broker-1', epoch: 0 }, events);
  await node.start();
  await node.createTopic('t', 1);
  await node.scan();
  loseNextAnswer = true;
  for (let i = 0; i < 6; i++) {
    clock.advance(200);
    await settle(20);
  }
  expect(node.leaseHeld()).toBe(true);
  await node.scan();
  expect(events).toEqual(['epoch-0 adopt t/0']);
  node.stop();
});
