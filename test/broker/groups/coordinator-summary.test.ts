// DescribeGroups shows a group as Kafka does: the chosen protocol, each member's metadata for it
// and its assignment only while the group is Stable; during a rebalance the members with neither.
// A group's protocol type stays once its members are gone.
import { expect, test } from 'bun:test';
import { GroupCoordinator, INITIAL_REBALANCE_DELAY_MS } from '../../../src/broker/groups/coordinator.ts';
import { LOCAL_CLAIM } from '../../../src/broker/groups/offset-store.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { settle } from '../../support/group-coordinators.ts';

const join = (groups: GroupCoordinator, memberId = '', metadata = new Uint8Array([1])) =>
  groups.join({
    groupId: 'g',
    memberId,
    clientId: 'app',
    clientHost: '/192.0.2.1',
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 5_000,
    protocolType: 'consumer',
    protocols: [
      { name: 'roundrobin', metadata: new Uint8Array([9]) },
      { name: 'range', metadata },
    ],
    claim: LOCAL_CLAIM,
  });

test('members without metadata while rebalancing; the chosen protocol, metadata and assignment once Stable', async () => {
  const clock = new ManualClock();
  const groups = new GroupCoordinator(clock);
  const joining = join(groups);
  await settle();
  expect(groups.summary('g')).toEqual({
    state: 'PreparingRebalance',
    protocolType: 'consumer',
    protocolName: '',
    members: [{ memberId: expect.any(String), clientId: 'app', clientHost: '/192.0.2.1', metadata: new Uint8Array(0), assignment: new Uint8Array(0) }],
  });
  clock.advance(INITIAL_REBALANCE_DELAY_MS);
  const joined = await joining;
  expect(groups.summary('g')!.state).toBe('CompletingRebalance');
  expect(groups.summary('g')!.members[0]!.metadata).toEqual(new Uint8Array(0));
  await groups.sync('g', joined.generationId, joined.memberId, [{ memberId: joined.memberId, assignment: new Uint8Array([4, 2]) }]);
  expect(groups.summary('g')).toEqual({
    state: 'Stable',
    protocolType: 'consumer',
    protocolName: 'roundrobin',
    members: [{ memberId: joined.memberId, clientId: 'app', clientHost: '/192.0.2.1', metadata: new Uint8Array([9]), assignment: new Uint8Array([4, 2]) }],
  });

  groups.leave('g', joined.memberId);
  expect(groups.summary('g')).toEqual({ state: 'Empty', protocolType: 'consumer', protocolName: '', members: [] });
  expect(groups.groupIds()).toEqual(['g']);
  expect(groups.summary('other')).toBeNull();
  groups.close();
});
