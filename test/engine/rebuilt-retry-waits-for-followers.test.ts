// Found by the simulation's acks-all-min-insync invariant (seeds 80, 169, 218): a broker that took
// a partition over rebuilt its log from the WAL, where the old leader had written batches it never
// acknowledged (the followers had not applied them). The new leader's high watermark counts its
// whole rebuilt log as committed, so the producer's idempotent retry of such a batch, a duplicate
// found in that log, was acknowledged at once: acks=all with min.insync.replicas 3 while only two
// replicas held it. Kafka's new leader acknowledges it only once min.insync replicas hold it.
import { expect, test } from 'bun:test';
import { Engine } from '../../src/engine/index.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';
import { managedBy } from '../support/cluster-policy.ts';

const REPLICATION_FACTOR = 3;
const LEADER_EPOCH = 4;

const batch = (nowMs: number) => buildRecordBatch([{ value: 'written by the old leader, never acknowledged' }], { nowMs, producerId: 7, producerEpoch: 0, baseSequence: 0 });

async function settled(promise: Promise<void>): Promise<'resolved' | 'rejected' | 'pending'> {
  let state: 'resolved' | 'rejected' | 'pending' = 'pending';
  promise.then(
    () => (state = 'resolved'),
    () => (state = 'rejected'),
  );
  for (let turn = 0; turn < 20; turn++) await new Promise((resolve) => setImmediate(resolve));
  return state;
}

test('a retried batch found in a log rebuilt from the WAL is acknowledged only once min.insync replicas hold it', async () => {
  const clock = new ManualClock();
  const followers = new Set<string>();
  const ferry = await Engine.open({
    directory: tempDir(),
    clock,
    cluster: managedBy({ followersOf: () => followers }),
    minInsyncReplicas: 2,
    log: { flush: { kind: 'none' } },
    wal: { store: new MemoryStore(), writerId: 'b', config: { uploadIntervalMs: 1000 } },
  });
  try {
    await ferry.adoptPartition('t', idOf('t'), 0, 1, async (log) => void log.append(batch(clock.nowMs()), LEADER_EPOCH - 1), 'leader', REPLICATION_FACTOR, LEADER_EPOCH);
    const retry = await ferry.appendBatches('t', 0, batch(clock.nowMs()));
    expect(retry.baseOffset).toBe(0); // the duplicate of the rebuilt batch
    expect(await settled(retry.committed)).toBe('pending'); // only the leader holds it
    followers.add('c');
    ferry.replicasChanged();
    expect(ferry.noteReplicaProgress('t', 0, 'c', 1, LEADER_EPOCH)).toBe(true);
    expect(await settled(retry.committed)).toBe('resolved');
  } finally {
    await ferry.close();
  }
});

// Sim seed 40001 (acks-all-min-insync): the same retry, but the new leader's log started over at the
// tier's end ([K2]), above the batch. A leader that had just taken the partition over (a promoted
// follower, whose high watermark counts its rebuilt log committed) tiered it without min.insync
// replicas ever holding it; the next leader started its log at the tier's end, with the tiered
// segment's producer snapshot, which still names the batch. Its acknowledgeable end started at its
// log start, so the retry, a duplicate below that start, was acknowledged at once with two replicas.
test('a retried batch the tier holds below a rebuilt log start is acknowledged only once min.insync replicas hold it', async () => {
  const clock = new ManualClock();
  const followers = new Set<string>();
  const ferry = await Engine.open({
    directory: tempDir(),
    clock,
    cluster: managedBy({ followersOf: () => followers }),
    minInsyncReplicas: 2,
    log: { flush: { kind: 'none' } },
    wal: { store: new MemoryStore(), writerId: 'b', config: { uploadIntervalMs: 1000 } },
  });
  const other = buildRecordBatch([{ value: 'another producer' }], { nowMs: clock.nowMs(), producerId: 8, producerEpoch: 0, baseSequence: 0 });
  try {
    const partition = await ferry.adoptPartition(
      't',
      idOf('t'),
      0,
      1,
      async (log) => {
        // The tier's segment [0, 2): its producer snapshot names producer 7's batch at offset 0.
        log.append(batch(clock.nowMs()), LEADER_EPOCH - 1);
        log.append(other, LEADER_EPOCH - 1);
        const producers = log.producerSnapshotAt(2);
        log.startAt(2, log.leaderEpochs, producers);
      },
      'leader',
      REPLICATION_FACTOR,
      LEADER_EPOCH,
    );
    const retry = await ferry.appendBatches('t', 0, batch(clock.nowMs()));
    expect(retry.baseOffset).toBe(0); // the duplicate of the tiered batch, below the log start
    expect(partition.log.logStartOffset).toBe(2);
    expect(await settled(retry.committed)).toBe('pending'); // no follower has said it holds it
    followers.add('c');
    ferry.replicasChanged();
    expect(ferry.noteReplicaProgress('t', 0, 'c', 2, LEADER_EPOCH)).toBe(true);
    expect(await settled(retry.committed)).toBe('resolved');
  } finally {
    await ferry.close();
  }
});
