// [R6] A leader partition's wait for its in-sync followers' log starts (Kafka's DelayedDeleteRecords):
// it ends once every in-sync follower reported a start at or above the offset, or once a follower
// that did not leaves the in-sync set; it fails when the partition goes away.
import { expect, test } from 'bun:test';
import { FerryError } from '../../src/errors.ts';
import { Partition } from '../../src/partition/partition.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { InSyncReplicas } from '../../src/partition/isr.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';

const OFFSET = 5;

function leaderWith(members: Set<string>): { partition: Partition; log: PartitionLog } {
  const clock = new ManualClock();
  const log = PartitionLog.open(tempDir(), { clock, config: { flush: { kind: 'none' } } });
  const isr = new InSyncReplicas(clock, { followers: () => members });
  return { partition: new Partition('t', idOf('t'), 0, log, null, { kind: 'leader', requiredFollowers: 0, isr }, 0, 0), log };
}

test('the wait ends once every in-sync follower reported a log start at or above the offset, or left the in-sync set', async () => {
  const members = new Set(['b', 'c']);
  const { partition, log } = leaderWith(members);
  expect(partition.lowestInSyncFollowerStart()).toBe(Infinity); // none in sync: nothing to wait for
  partition.noteFollowerApplied('b', 0, 0);
  partition.noteFollowerApplied('c', 0, 0);
  let done = false;
  const waited = partition.waitForFollowerStarts(OFFSET, new AbortController().signal).then(() => (done = true));
  partition.noteFollowerApplied('b', 0, OFFSET);
  partition.noteFollowerApplied('c', 0, OFFSET - 1);
  await Bun.sleep(0);
  expect({ done, lowest: partition.lowestInSyncFollowerStart() }).toEqual({ done: false, lowest: OFFSET - 1 });
  members.delete('c'); // a scan found its lease lapsed: it is waited for no more
  partition.replicasChanged();
  await waited;
  expect(partition.lowestInSyncFollowerStart()).toBe(OFFSET);
  await log.close();
});

test('a follower that does not say its log start (-1) is waited for; the wait fails with the partition, or with its signal', async () => {
  const { partition, log } = leaderWith(new Set(['b']));
  partition.noteFollowerApplied('b', 0); // an older peer: no log start
  const timedOut = new AbortController();
  const aborted = partition.waitForFollowerStarts(OFFSET, timedOut.signal).catch((error: unknown) => error);
  timedOut.abort(new FerryError('OutcomeUnknown', 'timed out'));
  expect(((await aborted) as FerryError).kind).toBe('OutcomeUnknown');
  const released = partition.waitForFollowerStarts(OFFSET, new AbortController().signal).catch((error: unknown) => error);
  partition.abandon(new FerryError('NotLeader', 'released'));
  expect(((await released) as FerryError).kind).toBe('NotLeader');
  await log.close();
});
