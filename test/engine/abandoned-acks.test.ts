// Finding 7 of issue 9: an acknowledgement waiting for followers (acks=all, min.insync.replicas > 1)
// must fail, never succeed, when its partition goes away (released to another leader, the engine closed).
import { expect, test } from 'bun:test';
import { Engine, type FerryErrorKind, isFerryError } from '../../src/engine/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';
import { managedBy } from '../support/cluster-policy.ts';

const REPLICATION_FACTOR = 3;

async function leaderWaitingForFollowers(): Promise<{ ferry: Engine; outcome: Promise<string> }> {
  const ferry = await Engine.open({ directory: tempDir(), cluster: managedBy(), minInsyncReplicas: 2, wal: { store: new MemoryStore(), writerId: 'a', config: { uploadIntervalMs: 1 } } });
  await ferry.adoptPartition('t', idOf('t'), 0, 1, async () => {}, 'leader', REPLICATION_FACTOR);
  const outcome = ferry.produce('t', [{ value: 'needs a follower' }], { partition: 0 }).then(
    () => 'acknowledged',
    (error: unknown) => (isFerryError(error) ? error.kind : String(error)),
  );
  const deadline = performance.now() + 10_000;
  while (ferry.wal!.durableOffset(idOf('t'), 0) !== 1) {
    // durable in the WAL: only the follower is missing
    if (performance.now() > deadline) throw new Error('the WAL object never became durable');
    await Bun.sleep(1);
  }
  await Bun.sleep(0);
  return { ferry, outcome };
}

test('releasing a partition fails the acknowledgements still waiting for followers (NotLeader)', async () => {
  const { ferry, outcome } = await leaderWaitingForFollowers();
  await ferry.releasePartition('t', 0);
  expect(await outcome).toBe('NotLeader' satisfies FerryErrorKind);
  await ferry.close();
});

test('closing the engine fails the acknowledgements still waiting for followers (Closed)', async () => {
  const { ferry, outcome } = await leaderWaitingForFollowers();
  await ferry.close();
  expect(await outcome).toBe('Closed' satisfies FerryErrorKind);
});
