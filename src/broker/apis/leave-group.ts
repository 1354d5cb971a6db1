import { type LeaveGroupRequest, leaveGroupRequestSchema, type LeaveGroupResponse, leaveGroupResponseSchema } from '../../protocol/messages/leave-group.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/leave-group.ts';

/** LeaveGroup (key 13); from v3 one request removes several members (KIP-345). */
export const leaveGroupCodec = schemaApi<LeaveGroupRequest, LeaveGroupResponse>({
  name: 'LeaveGroup',
  minVersion: 0,
  maxVersion: 5,
  request: leaveGroupRequestSchema,
  response: leaveGroupResponseSchema,
});
