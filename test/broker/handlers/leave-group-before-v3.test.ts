// LeaveGroup v0-2 name the leaving member at the top level (member_id); v3+ list members (KIP-345).
// The schema codec decodes a v0-2 request with that member_id and an empty members list, so the
// handler must take the one member from member_id, or the member is never removed and the group
// waits out its session timeout before it rebalances.
import { expect, test } from 'bun:test';
import { leaveGroupCodec } from '../../../src/broker/apis/leave-group.ts';
import { handleHeartbeat, handleLeaveGroup } from '../../../src/broker/handlers/groups.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { KafkaReader } from '../../../src/protocol/reader.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { kafkajsEncode } from '../../support/codec-harness.ts';
import { coordinatorBroker, GROUP, joinAndSync } from '../../support/group-coordinators.ts';

/** The versions that name one member at the top level. */
const SINGLE_MEMBER_VERSIONS = [0, 1, 2];

test.each(SINGLE_MEMBER_VERSIONS)('a LeaveGroup v%d from kafkajs removes its member from the group', async (version) => {
  const clock = new ManualClock();
  const broker = coordinatorBroker(1, new MemoryStore(), clock);
  const member = await joinAndSync(broker, clock);
  const bytes = await kafkajsEncode('leaveGroup', version, { groupId: GROUP, memberId: member.memberId });
  const request = leaveGroupCodec.decodeRequest(new KafkaReader(bytes), version);
  expect(handleLeaveGroup(broker, request).errorCode).toBe(ErrorCode.NONE);
  const heartbeat = { groupId: GROUP, generationId: member.generationId, memberId: member.memberId, groupInstanceId: null };
  expect(handleHeartbeat(broker, heartbeat).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
});

test('a LeaveGroup v0 of a member the group does not know answers UNKNOWN_MEMBER_ID', async () => {
  const clock = new ManualClock();
  const broker = coordinatorBroker(1, new MemoryStore(), clock);
  await joinAndSync(broker, clock);
  const bytes = await kafkajsEncode('leaveGroup', 0, { groupId: GROUP, memberId: 'stranger' });
  expect(handleLeaveGroup(broker, leaveGroupCodec.decodeRequest(new KafkaReader(bytes), 0)).errorCode).toBe(ErrorCode.UNKNOWN_MEMBER_ID);
});
