// Issue 12: ListGroups, DescribeGroups, DeleteGroups and OffsetDelete of the group coordinator, as
// Kafka's classic groups answer them, on a single broker (offsets file) and in a cluster (control
// records), through the handlers the protocol layer binds.
import { describe, expect, test } from 'bun:test';
import { handleDeleteGroups, handleDescribeGroups, handleListGroups, handleOffsetDelete, GROUP_OPERATIONS_ALL, AUTHORIZED_OPERATIONS_OMITTED } from '../../../src/broker/handlers/group-admin.ts';
import { handleLeaveGroup } from '../../../src/broker/handlers/groups.ts';
const { GROUP_SUBSCRIBED_TO_TOPIC } = ErrorCode;
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { adminBroker, commitOffsets, committedOffset, joinAndSync, type Mode, offsetStoreOf, subscription } from '../../support/group-admin-brokers.ts';
import { tempDir } from '../../support/temp-dir.ts';
import { deleteGroupsRequest, describeGroupsRequest, leaveGroupRequest, listGroupsRequest, offsetDeleteRequest } from '../../support/requests.ts';

function setup(mode: Mode) {
  const directory = tempDir();
  const store = new MemoryStore();
  const clock = new ManualClock();
  const broker = adminBroker(1, offsetStoreOf(mode, directory, store), clock);
  /** The same broker started again (single), or another broker taking the groups over (cluster). */
  const restarted = () => adminBroker(mode === 'single' ? 1 : 2, offsetStoreOf(mode, directory, store, mode === 'single' ? 1 : 2), clock);
  return { broker, clock, restarted };
}

async function listed(broker: Parameters<typeof handleListGroups>[0], statesFilter: string[] = [], typesFilter: string[] = []) {
  const response = await handleListGroups(broker, listGroupsRequest({ statesFilter, typesFilter }));
  expect(response.errorCode).toBe(ErrorCode.NONE);
  return response.groups.map((g) => `${g.groupId}:${g.protocolType}:${g.groupState}:${g.groupType}`).sort();
}

describe.each(['single', 'cluster'] as const)('%s broker', (mode) => {
  test('ListGroups: groups with members and groups known only by committed offsets (Empty), filtered by state and type in any case', async () => {
    const { broker, clock } = setup(mode);
    await joinAndSync(broker, clock, 'joined');
    expect(await commitOffsets(broker, 'assigner', [['t', 0]], 5)).toEqual([ErrorCode.NONE]); // assign + commit, never joined
    expect(await listed(broker)).toEqual(['assigner::Empty:classic', 'joined:consumer:Stable:classic']);
    expect(await listed(broker, ['stable'])).toEqual(['joined:consumer:Stable:classic']);
    expect(await listed(broker, [' EMPTY'])).toEqual(['assigner::Empty:classic']);
    expect(await listed(broker, ['Dead'])).toEqual([]);
    expect(await listed(broker, [], ['Classic'])).toHaveLength(2);
    expect(await listed(broker, [], ['consumer'])).toEqual([]); // KIP-848 groups: none here
  });

  test('DescribeGroups: a Stable group with its chosen protocol and members; one known by offsets is Empty; one unknown is Dead (v5) or GROUP_ID_NOT_FOUND (v6)', async () => {
    const { broker, clock } = setup(mode);
    const metadata = subscription(['t', 'u']);
    const member = await joinAndSync(broker, clock, 'g', { metadata, assignment: new Uint8Array([1, 2, 3]), clientId: 'app-1' });
    await commitOffsets(broker, 'offsets-only', [['t', 1]], 9);
    const described = (await handleDescribeGroups(broker, describeGroupsRequest({ groups: ['g', 'offsets-only', 'nobody'], includeAuthorizedOperations: true }), 5)).groups;
    expect(described[0]).toEqual({
      errorCode: ErrorCode.NONE,
      errorMessage: null,
      groupId: 'g',
      groupState: 'Stable',
      protocolType: 'consumer',
      protocolData: 'range',
      members: [{ memberId: member.memberId, groupInstanceId: null, clientId: 'app-1', clientHost: '/10.0.0.7', memberMetadata: metadata, memberAssignment: new Uint8Array([1, 2, 3]) }],
      authorizedOperations: GROUP_OPERATIONS_ALL,
    });
    expect(described[1]).toMatchObject({ errorCode: ErrorCode.NONE, groupState: 'Empty', protocolType: '', protocolData: '', members: [] });
    expect(described[2]).toMatchObject({ errorCode: ErrorCode.NONE, groupState: 'Dead', members: [] });
    const v6 = (await handleDescribeGroups(broker, describeGroupsRequest({ groups: ['nobody'], includeAuthorizedOperations: false }), 6)).groups[0]!;
    expect(v6).toMatchObject({ errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: 'Group nobody not found.', groupState: 'Dead', authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED });
  });

  test('DeleteGroups: NON_EMPTY_GROUP while a member is in it, GROUP_ID_NOT_FOUND for none; an empty group and its offsets are gone, also after a restart or takeover', async () => {
    const { broker, clock, restarted } = setup(mode);
    const member = await joinAndSync(broker, clock, 'g');
    expect(
      await commitOffsets(
        broker,
        'g',
        [
          ['t', 0],
          ['t', 1],
        ],
        12,
        member,
      ),
    ).toEqual([ErrorCode.NONE, ErrorCode.NONE]);
    await commitOffsets(broker, 'kept', [['t', 0]], 3);
    expect((await handleDeleteGroups(broker, deleteGroupsRequest({ groupsNames: ['g', 'nobody'] }))).results).toEqual([
      { groupId: 'g', errorCode: ErrorCode.NON_EMPTY_GROUP },
      { groupId: 'nobody', errorCode: ErrorCode.GROUP_ID_NOT_FOUND },
    ]);
    expect(await committedOffset(broker, 'g', 't', 0)).toBe(12);

    expect(handleLeaveGroup(broker, leaveGroupRequest({ groupId: 'g', members: [{ memberId: member.memberId, groupInstanceId: null }] })).errorCode).toBe(ErrorCode.NONE);
    expect((await handleDeleteGroups(broker, deleteGroupsRequest({ groupsNames: ['g'] }))).results).toEqual([{ groupId: 'g', errorCode: ErrorCode.NONE }]);
    expect(await committedOffset(broker, 'g', 't', 0)).toBe(-1);
    expect((await handleDescribeGroups(broker, describeGroupsRequest({ groups: ['g'] }), 5)).groups[0]!.groupState).toBe('Dead');
    expect(await listed(broker)).toEqual(['kept::Empty:classic']);
    expect((await handleDeleteGroups(broker, deleteGroupsRequest({ groupsNames: ['g'] }))).results[0]!.errorCode).toBe(ErrorCode.GROUP_ID_NOT_FOUND);

    const after = restarted();
    expect(await committedOffset(after, 'g', 't', 1)).toBe(-1);
    expect(await committedOffset(after, 'kept', 't', 0)).toBe(3);
    expect(await listed(after)).toEqual(['kept::Empty:classic']);
  });

  test('OffsetDelete: GROUP_SUBSCRIBED_TO_TOPIC for a topic a live member subscribes to, the others deleted; GROUP_ID_NOT_FOUND for no group', async () => {
    const { broker, clock, restarted } = setup(mode);
    const member = await joinAndSync(broker, clock, 'g', { metadata: subscription(['t']) });
    await commitOffsets(
      broker,
      'g',
      [
        ['t', 0],
        ['u', 0],
        ['u', 1],
      ],
      4,
      member,
    );
    const response = await handleOffsetDelete(
      broker,
      offsetDeleteRequest({
        groupId: 'g',
        topics: [
          { name: 't', partitions: [{ partitionIndex: 0 }] },
          { name: 'u', partitions: [{ partitionIndex: 0 }, { partitionIndex: 1 }] },
        ],
      }),
    );
    expect(response).toEqual({
      errorCode: ErrorCode.NONE,
      throttleTimeMs: 0,
      topics: [
        { name: 't', partitions: [{ partitionIndex: 0, errorCode: GROUP_SUBSCRIBED_TO_TOPIC }] },
        {
          name: 'u',
          partitions: [
            { partitionIndex: 0, errorCode: ErrorCode.NONE },
            { partitionIndex: 1, errorCode: ErrorCode.NONE },
          ],
        },
      ],
    });
    expect(await committedOffset(broker, 'g', 't', 0)).toBe(4);
    expect(await committedOffset(broker, 'g', 'u', 0)).toBe(-1);
    expect(await committedOffset(restarted(), 'g', 'u', 1)).toBe(-1);
    expect(await handleOffsetDelete(broker, offsetDeleteRequest({ groupId: 'nobody', topics: [{ name: 't', partitions: [{ partitionIndex: 0 }] }] }))).toEqual({
      errorCode: ErrorCode.GROUP_ID_NOT_FOUND,
      throttleTimeMs: 0,
      topics: [],
    });
  });
});

describe('OffsetDelete as Kafka judges the group', () => {
  test('an empty group loses every offset named; a member whose subscription cannot be read counts as subscribed to every topic', async () => {
    const { broker, clock } = setup('single');
    await commitOffsets(
      broker,
      'simple',
      [
        ['t', 0],
        ['t', 1],
      ],
      8,
    );
    expect((await handleOffsetDelete(broker, offsetDeleteRequest({ groupId: 'simple', topics: [{ name: 't', partitions: [{ partitionIndex: 1 }] }] }))).topics[0]!.partitions[0]!.errorCode).toBe(
      ErrorCode.NONE,
    );
    expect(await committedOffset(broker, 'simple', 't', 0)).toBe(8);
    expect(await committedOffset(broker, 'simple', 't', 1)).toBe(-1);

    const member = await joinAndSync(broker, clock, 'opaque', { metadata: new Uint8Array([0, 1, 0]) });
    await commitOffsets(broker, 'opaque', [['u', 0]], 2, member);
    expect((await handleOffsetDelete(broker, offsetDeleteRequest({ groupId: 'opaque', topics: [{ name: 'u', partitions: [{ partitionIndex: 0 }] }] }))).topics[0]!.partitions[0]!.errorCode).toBe(
      GROUP_SUBSCRIBED_TO_TOPIC,
    );
    expect(await committedOffset(broker, 'opaque', 'u', 0)).toBe(2);
  });

  test('a group with members of another protocol type (not consumers) is NON_EMPTY_GROUP; an empty group id is INVALID_GROUP_ID', async () => {
    const { broker, clock } = setup('single');
    const member = await joinAndSync(broker, clock, 'connect', { protocolType: 'connect', metadata: subscription([]) });
    await commitOffsets(broker, 'connect', [['t', 0]], 1, member);
    expect(await handleOffsetDelete(broker, offsetDeleteRequest({ groupId: 'connect', topics: [{ name: 't', partitions: [{ partitionIndex: 0 }] }] }))).toMatchObject({
      errorCode: ErrorCode.NON_EMPTY_GROUP,
      topics: [],
    });
    expect((await handleOffsetDelete(broker, offsetDeleteRequest({ groupId: '', topics: [] }))).errorCode).toBe(ErrorCode.INVALID_GROUP_ID);
  });
});

describe('cluster: each broker answers for the groups it coordinates', () => {
  test("ListGroups lists only this broker's groups; DescribeGroups, DeleteGroups and OffsetDelete of another's are NOT_COORDINATOR", async () => {
    const store = new MemoryStore();
    const clock = new ManualClock();
    const coordinator = (groupId: string) => (groupId.startsWith('one-') ? 1 : 2);
    const one = adminBroker(1, offsetStoreOf('cluster', '', store, 1), clock, coordinator);
    const two = adminBroker(2, offsetStoreOf('cluster', '', store, 2), clock, coordinator);
    await joinAndSync(one, clock, 'one-a');
    await commitOffsets(two, 'two-b', [['t', 0]], 1);
    expect(await listed(one)).toEqual(['one-a:consumer:Stable:classic']);
    expect(await listed(two)).toEqual(['two-b::Empty:classic']);
    expect((await handleDescribeGroups(one, describeGroupsRequest({ groups: ['two-b'] }), 5)).groups[0]).toMatchObject({ errorCode: ErrorCode.NOT_COORDINATOR, groupState: '', members: [] });
    expect((await handleDeleteGroups(one, deleteGroupsRequest({ groupsNames: ['two-b'] }))).results[0]!.errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    expect((await handleOffsetDelete(one, offsetDeleteRequest({ groupId: 'two-b', topics: [{ name: 't', partitions: [{ partitionIndex: 0 }] }] }))).errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    expect(await committedOffset(two, 'two-b', 't', 0)).toBe(1);
  });

  test('a delete by a coordinator another broker took the group from is refused (NOT_COORDINATOR) and removes nothing', async () => {
    const store = new MemoryStore();
    const clock = new ManualClock();
    const one = adminBroker(1, offsetStoreOf('cluster', '', store, 1), clock);
    const two = adminBroker(2, offsetStoreOf('cluster', '', store, 2), clock);
    const member = await joinAndSync(one, clock, 'g');
    await commitOffsets(one, 'g', [['t', 0]], 6, member);
    handleLeaveGroup(one, leaveGroupRequest({ groupId: 'g', members: [{ memberId: member.memberId, groupInstanceId: null }] }));
    await joinAndSync(two, clock, 'g'); // broker 2 claims g (the views of the live brokers differed)
    // broker 1 still holds g, empty, under the claim broker 2 took from it
    expect((await handleDeleteGroups(one, deleteGroupsRequest({ groupsNames: ['g'] }))).results[0]!.errorCode).toBe(ErrorCode.NOT_COORDINATOR);
    expect(await committedOffset(two, 'g', 't', 0)).toBe(6);
    expect((await handleDescribeGroups(two, describeGroupsRequest({ groups: ['g'] }), 5)).groups[0]!.groupState).toBe('Stable');
  });
});
