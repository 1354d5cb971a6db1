// Offset expiry after a restart (finding 20, adversarial review). Kafka expires a group's offsets
// offsets.retention.minutes after the group became empty, and knows when that was after a restart
// or a coordinator move (the group's state is in __consumer_offsets). Ferry keeps emptiness only
// in the coordinator's memory, so after a restart a group not seen yet counts from its last
// commit: a group that consumed a quiet topic for longer than the retention (librdkafka commits
// only offsets that changed), whose consumers were stopped an hour before the broker restarted,
// lost its offsets ten minutes after the restart (the first expiry round) instead of a week
// later, and its consumers then started over from auto.offset.reset. (offset-expiry.ts states
// this as a limitation; its cost is a consumer group's position.)
import { expect, test } from 'bun:test';
import { GroupCoordinator, INITIAL_REBALANCE_DELAY_MS, type JoinRequest } from '../../../src/broker/groups/coordinator.ts';
import { OffsetExpiry } from '../../../src/broker/groups/offset-expiry.ts';
import { LOCAL_CLAIM, OffsetStore } from '../../../src/broker/groups/offset-store.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { tempDir } from '../../support/temp-dir.ts';

const RETENTION_MS = 7 * 24 * 60 * 60_000;
const SESSION_TIMEOUT_MS = 10_000;
const HOUR_MS = 60 * 60_000;

function joinRequest(groupId: string): JoinRequest {
  return {
    groupId,
    memberId: '',
    clientId: 'c',
    sessionTimeoutMs: SESSION_TIMEOUT_MS,
    rebalanceTimeoutMs: 5_000,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: new Uint8Array(0) }],
    claim: LOCAL_CLAIM,
  };
}

// Fixed: a group this coordinator has no state for counts as empty from the first expiry round
// that found it, so its offsets live at least a whole retention past a restart or a move.
test('a group emptied an hour before a restart keeps its offsets for the retention after it emptied', async () => {
  const directory = tempDir();
  const clock = new ManualClock();
  const before = new GroupCoordinator(clock);
  const offsets = OffsetStore.open(directory);
  const join = before.join(joinRequest('g'));
  clock.advance(INITIAL_REBALANCE_DELAY_MS);
  const { memberId, generationId } = await join;
  await before.sync('g', generationId, memberId, []);
  await offsets.commit('g', [{ topic: 't', partition: 0, committed: { offset: 42, leaderEpoch: 0, metadata: null, commitTimestampMs: clock.nowMs(), byMember: true } }]);
  // a quiet topic: eight days of heartbeats, no new offset to commit
  for (let elapsedMs = 0; elapsedMs < RETENTION_MS + 24 * HOUR_MS; elapsedMs += SESSION_TIMEOUT_MS / 2) {
    clock.advance(SESSION_TIMEOUT_MS / 2);
    before.heartbeat('g', generationId, memberId);
  }
  before.leave('g', memberId); // the consumers are stopped
  clock.advance(HOUR_MS);
  before.close();

  // the broker restarts on the same directory; the consumers are still stopped
  const after = new GroupCoordinator(clock);
  const expiry = new OffsetExpiry({ groups: after, offsets: OffsetStore.open(directory), clock, retentionMs: RETENTION_MS, coordinates: () => true });
  clock.advance(10 * 60_000); // the first expiry round
  expect(await expiry.expireNow()).toBe(0);
  expect((await OffsetStore.open(directory).list('g')).map((o) => o.committed.offset)).toEqual([42]);
  // ...and they do expire once a whole retention has passed since this coordinator found the group empty.
  clock.advance(RETENTION_MS);
  expect(await expiry.expireNow()).toBe(1);
  expect(await OffsetStore.open(directory).list('g')).toEqual([]);
});
