import { type JoinGroupRequest, joinGroupRequestSchema, type JoinGroupResponse, joinGroupResponseSchema } from '../../protocol/messages/join-group.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/join-group.ts';

/** JoinGroup (key 11); sarama 1.22 joins with v1, which Kafka 4.0.0 removed and 4.0.1 restored. */
export const joinGroupCodec = schemaApi<JoinGroupRequest, JoinGroupResponse>({
  name: 'JoinGroup',
  minVersion: 0,
  maxVersion: 9,
  request: joinGroupRequestSchema,
  response: joinGroupResponseSchema,
});
