// Group admin under a slow or failing store. A DeleteGroups holds the group's joins while it
// removes the offsets (as Kafka's delete and joins take the group's lock in turn): a consumer
// joining meanwhile would fetch offsets that then vanish under it. A store that cannot be read is
// answered with the coordinator errors clients retry, never a closed connection.
import { expect, test } from 'bun:test';
import type { BrokerContext } from '../../../src/broker/context.ts';
import { FerryError } from '../../../src/errors.ts';
import { INITIAL_REBALANCE_DELAY_MS } from '../../../src/broker/groups/coordinator.ts';
import type { GroupOffsetStore } from '../../../src/broker/groups/offset-store.ts';
import { handleDeleteGroups, handleDescribeGroups, handleListGroups, handleOffsetDelete } from '../../../src/broker/handlers/group-admin.ts';
import { handleJoinGroup, handleLeaveGroup } from '../../../src/broker/handlers/groups.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { GatedStore } from '../../support/gated-store.ts';
import { adminBroker, commitOffsets, committedOffset, joinAndSync, offsetStoreOf, REBALANCE_TIMEOUT_MS, SESSION_TIMEOUT_MS, subscription } from '../../support/group-admin-brokers.ts';
import { GROUP_RECORDS, settle } from '../../support/group-coordinators.ts';
import { deleteGroupsRequest, describeGroupsRequest, joinGroupRequest, leaveGroupRequest, listGroupsRequest, offsetDeleteRequest } from '../../support/requests.ts';

test("a consumer joining while DeleteGroups removes the group's offsets joins after the removal, and finds none", async () => {
  const gated = new GatedStore();
  const clock = new ManualClock();
  const broker = adminBroker(1, offsetStoreOf('cluster', '', gated.store), clock);
  const first = await joinAndSync(broker, clock, 'g');
  await commitOffsets(broker, 'g', [['t', 0]], 30, first);
  handleLeaveGroup(broker, leaveGroupRequest({ groupId: 'g', members: [{ memberId: first.memberId, groupInstanceId: null }] }));

  gated.hold(GROUP_RECORDS); // the removal (a compare-and-swap) is slow to land
  const deleting = handleDeleteGroups(broker, deleteGroupsRequest({ groupsNames: ['g'] }));
  await settle();
  let answered = false;
  const joining = handleJoinGroup(
    broker,
    joinGroupRequest({
      groupId: 'g',
      sessionTimeoutMs: SESSION_TIMEOUT_MS,
      rebalanceTimeoutMs: REBALANCE_TIMEOUT_MS,
      memberId: '',
      groupInstanceId: null,
      protocolType: 'consumer',
      protocols: [{ name: 'range', metadata: subscription(['t']) }],
    }),
    'c',
  ).then((result) => {
    answered = true;
    return result;
  });
  await settle();
  clock.advance(INITIAL_REBALANCE_DELAY_MS);
  await settle();
  expect(answered).toBe(false); // no generation forms while the removal is on its way
  gated.release(GROUP_RECORDS);
  expect((await deleting).results).toEqual([{ groupId: 'g', errorCode: ErrorCode.NONE }]);
  await settle();
  clock.advance(INITIAL_REBALANCE_DELAY_MS);
  expect((await joining).errorCode).toBe(ErrorCode.NONE);
  expect(await committedOffset(broker, 'g', 't', 0)).toBe(-1);
});

/** An offset store whose reads fail as a store outage does (FerryError Storage). */
function unreadable(offsets: GroupOffsetStore): GroupOffsetStore {
  const outage = () => Promise.reject(new FerryError('Storage', 'injected: the control records cannot be read'));
  return new Proxy(offsets, { get: (target, name) => (name === 'list' || name === 'groups' ? outage : (Reflect.get(target, name, target) as () => unknown).bind(target)) });
}

test('offsets that cannot be read: COORDINATOR_LOAD_IN_PROGRESS, ListGroups with the groups held in memory', async () => {
  const clock = new ManualClock();
  const healthy = adminBroker(1, offsetStoreOf('cluster', '', new GatedStore().store), clock);
  await joinAndSync(healthy, clock, 'held');
  const broker = { ...healthy, offsets: unreadable(healthy.offsets) } as BrokerContext;
  const listing = await handleListGroups(broker, listGroupsRequest({}));
  expect(listing.errorCode).toBe(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  expect(listing.groups.map((g) => g.groupId)).toEqual(['held']);
  expect((await handleListGroups(broker, listGroupsRequest({ statesFilter: ['Stable'] }))).errorCode).toBe(ErrorCode.NONE); // no stored group can be Stable: none read
  expect((await handleDescribeGroups(broker, describeGroupsRequest({ groups: ['held', 'other'] }), 5)).groups.map((g) => [g.groupState, g.errorCode])).toEqual([
    ['Stable', ErrorCode.NONE],
    ['', ErrorCode.COORDINATOR_LOAD_IN_PROGRESS],
  ]);
  expect((await handleDeleteGroups(broker, deleteGroupsRequest({ groupsNames: ['other'] }))).results[0]!.errorCode).toBe(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  expect((await handleOffsetDelete(broker, offsetDeleteRequest({ groupId: 'other', topics: [] }))).errorCode).toBe(ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
});
