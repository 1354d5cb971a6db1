import { type SyncGroupRequest, syncGroupRequestSchema, type SyncGroupResponse, syncGroupResponseSchema } from '../../protocol/messages/sync-group.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/sync-group.ts';

/** SyncGroup (key 14). */
export const syncGroupCodec = schemaApi<SyncGroupRequest, SyncGroupResponse>({
  name: 'SyncGroup',
  minVersion: 0,
  maxVersion: 5,
  request: syncGroupRequestSchema,
  response: syncGroupResponseSchema,
});
