// The in-sync replica set (src/partition/isr.ts) and the leader high watermark it decides, on a manual clock.
import { expect, test } from 'bun:test';
import { Partition } from '../../src/partition/partition.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { InSyncReplicas, REPLICA_LAG_TIME_MAX_MS } from '../../src/partition/isr.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { batchOf } from '../support/batches.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';

const LAG_MS = 1000;

function isrOf(clock: ManualClock, members: Set<string>): InSyncReplicas {
  return new InSyncReplicas(clock, { followers: () => members }, LAG_MS);
}

test("Kafka's default replica.lag.time.max.ms", () => {
  expect(REPLICA_LAG_TIME_MAX_MS).toBe(30_000);
});

test('a follower leaves the in-sync set as soon as it leaves the replica set (its lease lapsed), and its entry goes', () => {
  const clock = new ManualClock();
  const members = new Set(['b', 'c']);
  const isr = isrOf(clock, members);
  expect(isr.noteProgress('b', 5, 5)).toBe(true);
  expect(isr.noteProgress('c', 5, 5)).toBe(true);
  expect([...isr.inSync(5).keys()].sort()).toEqual(['b', 'c']);
  members.delete('c');
  expect([...isr.inSync(8).keys()]).toEqual(['b']); // lagging b is still within its lag time
  expect(isr.size).toBe(1);
});

test('a lagging follower stays in sync for replica.lag.time.max.ms, then leaves; catching up brings it back', () => {
  const clock = new ManualClock();
  const isr = isrOf(clock, new Set(['b']));
  isr.noteProgress('b', 5, 5);
  clock.advance(LAG_MS); // the leader moved on to 9, b reports nothing
  expect(isr.inSync(9).has('b')).toBe(true);
  expect(isr.nextLapseMs(9)).toBe(clock.monotonicMs());
  clock.advance(1);
  expect(isr.inSync(9).has('b')).toBe(false);
  isr.noteProgress('b', 7, 9); // reaches what was durable at its previous report (5): caught up as of then, too long ago
  expect(isr.inSync(9).has('b')).toBe(false);
  clock.advance(10);
  isr.noteProgress('b', 9, 12); // reached the leader's end as of its previous report: caught up then (10 ms ago)
  expect(isr.inSync(12).get('b')).toBe(9);
  expect(isr.inSync(9).get('b')).toBe(9); // holding everything durable is in sync whatever the time
});

test('a report from a replica outside the replica set is ignored and never grows the table', () => {
  const clock = new ManualClock();
  const isr = isrOf(clock, new Set(['b']));
  for (let i = 0; i < 100; i++) expect(isr.noteProgress(`forged-${i}`, 1_000, 10)).toBe(false);
  expect(isr.size).toBe(0);
  expect(isr.inSync(10).size).toBe(0);
});

test('RF 3, min.insync.replicas 2: the high watermark waits for a silent in-sync follower, then goes on without it after the lag time or when its lease lapses', async () => {
  for (const dropBy of ['lag time', 'lease'] as const) {
    const clock = new ManualClock();
    const members = new Set(['b', 'c']);
    const log = PartitionLog.open(tempDir(), { clock, config: { flush: { kind: 'per-append' } } });
    const partition = new Partition('t', idOf('t'), 0, log, null, { kind: 'leader', requiredFollowers: 1, isr: isrOf(clock, members) }, 0, 0);
    partition.noteFollowerApplied('b', 0); // both followers report in this leadership: both in sync
    partition.noteFollowerApplied('c', 0);
    let acknowledged = false;
    const { durable } = await partition.append(batchOf('x'));
    void durable.then(() => (acknowledged = true));
    await Bun.sleep(0);
    partition.noteFollowerApplied('b', 1);
    // c goes silent without applying it
    await Bun.sleep(0);
    expect(partition.highWatermark).toBe(0); // acks=all waits for every in-sync follower
    if (dropBy === 'lag time') {
      clock.advance(LAG_MS + 1); // nothing else happens: the lapse timer re-checks the in-sync set
    } else {
      members.delete('c'); // a cluster scan found c's lease lapsed
      partition.replicasChanged();
    }
    await Bun.sleep(0);
    expect({ dropBy, highWatermark: partition.highWatermark, acknowledged }).toEqual({ dropBy, highWatermark: 1, acknowledged: true });
    partition.noteFollowerApplied('b', 0);
    members.delete('b');
    partition.replicasChanged();
    const next = await partition.append(batchOf('y'));
    await Bun.sleep(0);
    expect(partition.highWatermark).toBe(1); // no follower in sync: fewer than min.insync.replicas, nothing commits
    void next.durable.catch(() => {});
    await log.close();
  }
});
