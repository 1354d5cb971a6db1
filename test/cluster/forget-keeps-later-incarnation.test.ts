// Seed 212 (RF 3, a topic re-created): a follower that fell behind the WAL floor followed again
// from the partition's record ([D4]) and so took up the topic's new incarnation, before the scan
// that saw the delete told the host to forget the old one. The host deleted the topic by name,
// which retired the new incarnation's id in the engine: every later follow of it was refused
// ("topic id ... is malformed, deleted, or another topic's") and acks=all stopped for good.
// Forgetting an incarnation lets go of a later one the engine holds, and never retires it.
import { expect, test } from 'bun:test';
import { PartitionHost } from '../../src/cluster/partition-host.ts';
import { Engine } from '../../src/engine/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { idOf } from '../support/topic-ids.ts';
import { tempDir } from '../support/temp-dir.ts';
import { managedBy } from '../support/cluster-policy.ts';

test('forgetting a deleted incarnation lets go of the later one held here without retiring it', async () => {
  const clock = new ManualClock();
  const store = new MemoryStore();
  const engine = await Engine.open({ directory: tempDir(), clock, cluster: managedBy(), log: { flush: { kind: 'none' } }, wal: { store, writerId: 'b1', config: { uploadIntervalMs: 1 } } });
  const host = new PartitionHost({ engine, store, prefix: '', nodeId: 1, clock, readChain: async () => [], readRecord: async () => null, replicationFactor: () => 1, leaderOf: () => null });
  const [old, later] = [idOf('orders-1'), idOf('orders-2')];
  await engine.adoptPartition('orders', later, 0, 1, async () => {}, 'follower', 1, 0); // the later incarnation, taken up already
  await host.forget('orders', old);
  expect(engine.incarnationOf('orders')).toBe(later);
  expect(engine.serves('orders', 0)).toBe(false); // let go of: the next scan follows it again
  await engine.adoptPartition('orders', later, 0, 1, async () => {}, 'follower', 1, 0); // and it can: the id is not retired
  expect(engine.incarnationOf('orders')).toBe(later);
  await host.forget('orders', later); // the later incarnation deleted in turn: now it goes
  expect(engine.incarnationOf('orders')).toBeNull();
  host.stop();
  await engine.close();
});
