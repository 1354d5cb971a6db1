// Review of issue 9 finding 6: Kafka refuses acks=all (NOT_ENOUGH_REPLICAS) on a partition with
// fewer replicas than min.insync.replicas; Ferry caps min.insync.replicas at the replication
// factor (docs/cluster-protocol.md), so with min.insync.replicas 2 a replication-factor-1 topic
// is acknowledged by the leader alone. A deliberate deviation, but it breaks the promise a
// producer configured min.insync.replicas 2 for: no ack unless a second replica holds the records.
import { expect, test } from 'bun:test';
import { Ferry, isFerryError } from '../../src/engine/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';

test('min.insync.replicas 2 on a replication-factor-1 partition: acks=all is never acknowledged by the leader alone', async () => {
  const store = new MemoryStore();
  const ferry = await Ferry.open({ directory: tempDir(), managedPartitions: true, minInsyncReplicas: 2, wal: { store, writerId: 'a', config: { uploadIntervalMs: 1 } } });
  await ferry.adoptPartition('t', idOf('t'), 0, 1, async () => {}, 'leader', 1);
  let outcome = 'pending';
  void ferry.produce('t', [{ value: 'x' }], { partition: 0, acks: 'all' }).then(() => (outcome = 'acknowledged'), (error: unknown) => (outcome = isFerryError(error) ? error.kind : String(error)));
  const deadline = performance.now() + 2000;
  while (outcome === 'pending' && ferry.wal!.durableOffset(idOf('t'), 0) !== 1 && performance.now() < deadline) await Bun.sleep(1);
  await Bun.sleep(20);
  expect(outcome).not.toBe('acknowledged');
  await ferry.close();
});
