// Offset expiry across a coordinator move away and back (adversarial review r7). A coordinator
// remembers when it first found a stateless group empty (#foundEmptyMs). If the group then moves
// to another coordinator, where consumers use it for longer than the retention, and moves back,
// the old finding must not count: the group was not empty in this coordinator's sight all that
// time. Before the fix the stale finding was kept (a group not coordinated was skipped without
// forgetting it), and the group's offsets expired in the first round after the move back: its
// consumers then started over from auto.offset.reset.
import { expect, test } from 'bun:test';
import { GroupCoordinator } from '../../../src/broker/groups/coordinator.ts';
import { OffsetExpiry } from '../../../src/broker/groups/offset-expiry.ts';
import { OffsetStore } from '../../../src/broker/groups/offset-store.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { tempDir } from '../../support/temp-dir.ts';

const RETENTION_MS = 7 * 24 * 60 * 60_000;
const HOUR_MS = 60 * 60_000;

test('a group that moved away and back counts as empty from when it came back, not from an old finding', async () => {
  const directory = tempDir();
  const clock = new ManualClock();
  const offsets = OffsetStore.open(directory);
  await offsets.commit('g', [{ topic: 't', partition: 0, committed: { offset: 1, leaderEpoch: 0, metadata: null, commitTimestampMs: clock.nowMs(), byMember: true } }]);
  let coordinated = true;
  const expiry = new OffsetExpiry({ groups: new GroupCoordinator(clock), offsets, clock, retentionMs: RETENTION_MS, coordinates: () => coordinated });
  expect(await expiry.expireNow()).toBe(0); // found empty here, now
  coordinated = false; // the group moves to another broker...
  clock.advance(HOUR_MS);
  expect(await expiry.expireNow()).toBe(0);
  // ...whose consumers commit once and then consume a quiet topic for two retentions, then stop
  await offsets.commit('g', [{ topic: 't', partition: 0, committed: { offset: 42, leaderEpoch: 0, metadata: null, commitTimestampMs: clock.nowMs(), byMember: true } }]);
  clock.advance(2 * RETENTION_MS);
  coordinated = true; // the group moves back
  clock.advance(HOUR_MS);
  expect(await expiry.expireNow()).toBe(0);
  expect((await offsets.list('g')).map((o) => o.committed.offset)).toEqual([42]);
  clock.advance(RETENTION_MS);
  expect(await expiry.expireNow()).toBe(1);
});

// An offset from a file written before commits recorded byMember (an upgrade's first restart) may
// be a consumer group's: it is judged as one (waits a retention from when it is first found), as
// expiring it from its commit dropped the position of a group that consumed a quiet topic until
// the upgrade. A simple consumer's old offset then lives at most one retention longer, never shorter.
test('an offset of an older file, without byMember, waits a retention after a restart', async () => {
  const directory = tempDir();
  const clock = new ManualClock();
  const offsets = OffsetStore.open(directory);
  await offsets.commit('g', [{ topic: 't', partition: 0, committed: { offset: 42, leaderEpoch: 0, metadata: null, commitTimestampMs: clock.nowMs() } }]);
  clock.advance(RETENTION_MS + 24 * HOUR_MS); // consumed a quiet topic until the upgrade's restart
  const expiry = new OffsetExpiry({ groups: new GroupCoordinator(clock), offsets, clock, retentionMs: RETENTION_MS, coordinates: () => true });
  expect(await expiry.expireNow()).toBe(0);
  clock.advance(RETENTION_MS);
  expect(await expiry.expireNow()).toBe(1);
});
