// Review of issue 9 finding 6/13: a follower's progress report naming an offset the leader's log
// does not reach (a forged report, or one from a follower of an earlier incarnation of the topic)
// must not count. Counted, it makes the follower look caught up with records it never applied,
// and acks=all with min.insync.replicas 2 then succeeds with the leader alone.
import { expect, test } from 'bun:test';
import { Partition } from '../../src/partition/partition.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { InSyncReplicas } from '../../src/partition/isr.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { batchOf } from '../support/batches.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';

const LAG_MS = 1000;

async function leaderOfOne(clock: ManualClock): Promise<{ partition: Partition; log: PartitionLog }> {
  const log = PartitionLog.open(tempDir(), { clock, config: { flush: { kind: 'per-append' } } });
  const isr = new InSyncReplicas(clock, { followers: () => new Set(['b']) }, LAG_MS);
  return { partition: new Partition('t', idOf('t'), 0, log, null, { kind: 'leader', requiredFollowers: 1, isr }, 0, 0), log };
}

test('min.insync.replicas 2: a follower report beyond the leader log end is refused, and acks=all waits until the follower really applied the record', async () => {
  for (const history of ['first report', 'after an honest report'] as const) {
    const clock = new ManualClock();
    const { partition, log } = await leaderOfOne(clock);
    if (history === 'after an honest report') expect(partition.noteFollowerApplied('b', 0)).toBe(true);
    const counted = partition.noteFollowerApplied('b', 1_000); // the leader's log ends at 0
    let acknowledged = false;
    const { durable } = await partition.append(batchOf('x'));
    void durable.then(
      () => (acknowledged = true),
      () => {},
    );
    for (let i = 0; i < 5; i++) await Bun.sleep(0);
    expect({ history, acknowledged, highWatermark: partition.highWatermark, counted }).toEqual({ history, acknowledged: false, highWatermark: 0, counted: false });
    expect(partition.noteFollowerApplied('b', 1)).toBe(true); // now it holds the record
    for (let i = 0; i < 5; i++) await Bun.sleep(0);
    expect({ history, acknowledged, highWatermark: partition.highWatermark }).toEqual({ history, acknowledged: true, highWatermark: 1 });
    await log.close();
  }
});
