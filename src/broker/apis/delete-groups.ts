import { type DeleteGroupsRequest, deleteGroupsRequestSchema, type DeleteGroupsResponse, deleteGroupsResponseSchema } from '../../protocol/messages/delete-groups.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/delete-groups.ts';

/** DeleteGroups (key 42). */
export const deleteGroupsCodec = schemaApi<DeleteGroupsRequest, DeleteGroupsResponse>({
  name: 'DeleteGroups',
  minVersion: 0,
  maxVersion: 2,
  request: deleteGroupsRequestSchema,
  response: deleteGroupsResponseSchema,
});
