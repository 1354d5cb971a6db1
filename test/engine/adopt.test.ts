// A managed engine's partitions (docs/cluster-protocol.md [C5]): an acknowledgement after a
// re-adoption depends on the WAL object holding that append, never on what an earlier adoption
// made durable; appends carry the leader epoch the cluster assigned.
import { expect, test } from 'bun:test';
import { Engine } from '../../src/engine/index.ts';
import { isFerryError } from '../../src/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { GatedStore } from '../support/gated-store.ts';
import { tempDir } from '../support/temp-dir.ts';
import { passUntilSettled } from '../support/pass-until-settled.ts';
import { idOf } from '../support/topic-ids.ts';
import { batchOf } from '../support/batches.ts';
import { managedBy } from '../support/cluster-policy.ts';

async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

test('after release and re-adoption an acks=all append waits for its own WAL object (finding 4)', async () => {
  const gated = new GatedStore();
  const clock = new ManualClock();
  const ferry = await Engine.open({
    directory: tempDir(),
    clock,
    cluster: managedBy(),
    log: { flush: { kind: 'none' } },
    wal: { store: gated.store, writerId: 'b1', config: { uploadIntervalMs: 1 } },
  });
  await ferry.adoptPartition('t', idOf('t'), 0, 1, async () => {});
  for (let i = 0; i < 5; i++) await passUntilSettled(clock, ferry.produce('t', [{ value: `first-${i}` }], { partition: 0, acks: 'all' })); // durable up to offset 5
  await ferry.releasePartition('t', 0);
  await ferry.adoptPartition('t', idOf('t'), 0, 1, async () => {}); // a rebuild that brought nothing: the log starts again at 0
  gated.hold('wal/');
  let acknowledged = false;
  const produced = ferry.produce('t', [{ value: 'second' }], { partition: 0, acks: 'all' }).then(() => (acknowledged = true));
  for (let i = 0; i < 10; i++) {
    clock.advance(1); // past the upload interval: the object is closed, its put held
    await settle();
  }
  expect(acknowledged).toBe(false); // its object is not durable
  expect(ferry.fetch('t', 0, 0).highWatermark).toBe(0);
  gated.release('wal/');
  await passUntilSettled(clock, produced);
  expect(ferry.fetch('t', 0, 0).highWatermark).toBe(1);
  await ferry.close();
});

test('appends carry the leader epoch given at adoption; the embedded engine uses 0', async () => {
  const store = new MemoryStore();
  const ferry = await Engine.open({ directory: tempDir(), cluster: managedBy(), log: { flush: { kind: 'none' } }, wal: { store, writerId: 'b1', config: { uploadIntervalMs: 1 } } });
  await ferry.adoptPartition('t', idOf('t'), 0, 1, async () => {}, 'leader', 1, 7);
  expect(ferry.leaderEpoch('t', 0)).toBe(7);
  await ferry.produce('t', [{ value: 'v' }], { partition: 0 });
  expect(ferry.fetch('t', 0, 0).batches[0]!.partitionLeaderEpoch).toBe(7);
  await ferry.close();
  const embedded = await Engine.open({ directory: tempDir() });
  embedded.createTopic('e');
  await embedded.produce('e', [{ value: 'v' }]);
  expect(embedded.leaderEpoch('e', 0)).toBe(0);
  expect(embedded.fetch('e', 0, 0).batches[0]!.partitionLeaderEpoch).toBe(0);
  await embedded.close();
});

test('a partition let go of acknowledges nothing more, even what becomes durable after', async () => {
  const gated = new GatedStore();
  const clock = new ManualClock();
  const ferry = await Engine.open({
    directory: tempDir(),
    clock,
    cluster: managedBy(),
    log: { flush: { kind: 'none' } },
    wal: { store: gated.store, writerId: 'b1', config: { uploadIntervalMs: 1 } },
  });
  await ferry.adoptPartition('t', idOf('t'), 0, 1, async () => {});
  gated.hold('wal/');
  const produced = ferry.produce('t', [{ value: 'v' }], { partition: 0, acks: 'all' });
  clock.advance(5);
  await settle();
  await ferry.releasePartition('t', 0); // another broker leads it now [C6]
  gated.release('wal/');
  const outcome = await passUntilSettled(
    clock,
    produced.then(
      () => 'acknowledged',
      (error: unknown) => error,
    ),
  );
  expect(isFerryError(outcome, 'NotLeader')).toBe(true);
  await ferry.close();
});

test('a topic config the cluster hands over while a partition is being adopted applies to it once served (sim seed 30174)', async () => {
  const clock = new ManualClock();
  const ferry = await Engine.open({
    directory: tempDir(),
    clock,
    cluster: managedBy(),
    log: { flush: { kind: 'none' } },
    wal: { store: new MemoryStore(), writerId: 'b1', config: { uploadIntervalMs: 1 } },
  });
  const rebuilding = Promise.withResolvers<void>();
  const adopted = ferry.adoptPartition('t', idOf('t'), 0, 1, () => rebuilding.promise);
  await settle();
  ferry.applyTopicConfigs('t', { 'message.timestamp.type': 'LogAppendTime' }); // a scan saw the alter mid-rebuild
  rebuilding.resolve();
  await adopted;
  const appended = await ferry.appendBatches('t', 0, batchOf('a', 1, clock.nowMs() - 1000));
  expect(appended.logAppendTimeMs).toBe(clock.nowMs());
  await ferry.close();
});
