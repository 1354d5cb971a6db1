// Adversarial review of issue 11, guarantees 1 and 5 (GI1: "GC never deletes a WAL object ... the
// embedded replica follower still needs"; [D4] "a follower behind the floor re-follows and ends
// byte-identical"). Failed on main from 8c03420 to 9989ddb; fixed: the replica follower starts a
// partition's log at the tier's end when its next frame lies past the log's end and the tier
// reaches it (FollowerTarget.startAtTier, src/engine/embedded-follower.ts).
//
// What it shows: a single broker's read replica (an engine opened with `follow`) that starts after
// WAL GC collected a prefix of the leader's stream can never serve the partition. Nothing holds GC
// for it (src/engine/engine.ts #walCoverage inSyncFollowersEnd counts only in-sync linked replicas,
// Infinity with none), and the replica follower has no [K2]/[D4] path: it starts at the stream's
// floor (src/partition/follower.ts #firstPosition -> #fromFloor) with an empty log at offset 0, so the
// first frame it reads starts past its log end and applyFrame (src/partition/apply.ts) throws
// InvalidOffsets, which fails the follower for good ("a gap then fails it", tier-protocol.md Status).
// Unlike the cluster follower (PartitionHost follows again from TE), it never starts its log at the
// tier's end, even when opened with `tier`. Severity: unavailability of every read replica started
// (or restarted after a pause longer than its checkpoint's reach) once GC has run.
import { expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { Engine } from '../../src/engine/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { tempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

const DRIVEN_BY_THE_TEST_MS = 3_600_000;

/** The replica's log end; -1 until the WAL named the partition to it. */
function endOf(replica: Engine): number {
  try {
    return replica.logEndOffset('events', 0);
  } catch {
    return -1;
  }
}

test('a read replica started after WAL GC follows the leader and serves its tail', async () => {
  const wal = new MemoryStore();
  const tier = new MemoryStore();
  const control = new ControlStore(tier, '');
  const leader = await Engine.open({
    directory: tempDir(),
    log: { segmentBytes: 4096 },
    wal: { store: wal, writerId: 'w', config: { uploadIntervalMs: 1 } },
    tier: { store: tier, control, intervalMs: DRIVEN_BY_THE_TEST_MS },
    walGcIntervalMs: DRIVEN_BY_THE_TEST_MS,
  });
  leader.createTopic('events', { partitions: 1 });
  for (let i = 0; i < 60; i++) await leader.produce('events', [{ value: `record ${i} `.padEnd(300, '.') }], { acks: 'all' });
  while ((await leader.tierer!.tierDue()) > 0);
  expect(await leader.walCollector!.collect()).toBeGreaterThan(0); // a prefix of the stream is gone (it is tiered)

  const replica = await Engine.open({ directory: tempDir(), follow: { store: wal, writerId: 'w' }, tier: { store: tier, control, intervalMs: DRIVEN_BY_THE_TEST_MS } });
  const leaderEnd = leader.logEndOffset('events', 0);
  await until(() => replica.follower!.failure !== null || endOf(replica) === leaderEnd, 'the replica to catch up or fail');
  expect(replica.follower!.failure?.message ?? null).toBeNull();
  expect(replica.logEndOffset('events', 0)).toBe(leaderEnd);
  await replica.close();
  await leader.close();
}, 30_000);
