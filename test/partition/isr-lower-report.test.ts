// Issue 9 finding 5, review: the leader kept the highest log end a follower ever reported. A
// follower whose log was replaced (it still reported the end of a deleted incarnation of the topic
// by name, then re-followed the new one from scratch) stayed counted at the old end, so acks=all
// with min.insync.replicas 2 counted it for records it did not hold. Kafka's leader takes each
// replica fetch offset as the follower's log end now; so does this one.
import { expect, test } from 'bun:test';
import { leaderHighWatermark } from '../../src/partition/high-watermark.ts';
import { InSyncReplicas } from '../../src/partition/isr.ts';
import { ManualClock } from '../../src/util/clock.ts';

test('a follower counts at the log end it reports now, even when that is lower than an earlier report', () => {
  const clock = new ManualClock();
  const isr = new InSyncReplicas(clock, { followers: () => new Set(['broker-2']) }, 1000);
  // The stale report: five records of the old incarnation, once the new one's log also reached 5.
  expect(isr.noteProgress('broker-2', 5, 5)).toBe(true);
  // The follower learns of the new incarnation and reports what it holds of it: nothing yet.
  expect(isr.noteProgress('broker-2', 0, 8)).toBe(true);
  expect(isr.inSync(8).get('broker-2')).toBe(0);
  expect(leaderHighWatermark(8, isr.inSync(8).values(), 1)).toBe(0); // nothing of the new incarnation is on a second replica
  expect(isr.noteProgress('broker-2', 8, 8)).toBe(true);
  expect(leaderHighWatermark(8, isr.inSync(8).values(), 1)).toBe(8);
});
