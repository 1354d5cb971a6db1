// Group coordinator fencing, as an adversarial review tried to break it: what a claim leaves in the store.
// Every JoinGroup now writes the group's control record (the claim) before the group holds any
// state, and a group record is never deleted (the store has no conditional delete). A group that
// never commits (a console consumer with a fresh group id each run, a probe, a consumer that
// seeks by itself) left nothing in the store before; now each leaves a record for ever, and every
// offset expiry round LISTs and GETs every one of them, on every broker.
import { expect, test } from 'bun:test';
import { GroupCoordinator, INITIAL_REBALANCE_DELAY_MS } from '../../../src/broker/groups/coordinator.ts';
import { OffsetExpiry } from '../../../src/broker/groups/offset-expiry.ts';
import { ControlOffsetStore } from '../../../src/broker/groups/offset-store.ts';
import { ControlStore } from '../../../src/control/control-store.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { ManualClock } from '../../../src/util/clock.ts';

const RETENTION_MS = 60 * 60_000;
const GROUPS = 20;

// Found by review (finding 9), not fixed yet: deleting an empty group record safely needs a
// conditional delete (S3's DeleteObject with If-Match, which the ObjectStore interface does not
// offer yet): an unconditional one could erase a claim or a commit that landed in between.
test.todo('groups that joined and left without committing leave no record once the retention has passed', async () => {
  const clock = new ManualClock();
  const groups = new GroupCoordinator(clock);
  const offsets = new ControlOffsetStore(new ControlStore(new MemoryStore(), 'cluster'), { nodeId: 1, incarnation: 'broker-1' });
  const expiry = new OffsetExpiry({ groups, offsets, clock, retentionMs: RETENTION_MS, coordinates: () => true });
  for (let i = 0; i < GROUPS; i++) {
    const groupId = `console-consumer-${i}`;
    const joining = groups.join({
      groupId,
      memberId: '',
      clientId: 'c',
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: 5_000,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: new Uint8Array(0) }],
      claim: await offsets.claim(groupId),
    });
    clock.advance(INITIAL_REBALANCE_DELAY_MS);
    const { memberId } = await joining;
    groups.leave(groupId, memberId);
  }
  clock.advance(RETENTION_MS);
  await expiry.expireNow();
  expect(groups.groupCount).toBe(0);
  expect((await offsets.groups()).length).toBe(0); // fails: 20 records, listed and read by every expiry round from now on
});
