import { type ListGroupsRequest, listGroupsRequestSchema, type ListGroupsResponse, listGroupsResponseSchema } from '../../protocol/messages/list-groups.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/list-groups.ts';

/** ListGroups (key 16); v4 filters by state (KIP-518), v5 by type (KIP-848). */
export const listGroupsCodec = schemaApi<ListGroupsRequest, ListGroupsResponse>({
  name: 'ListGroups',
  minVersion: 0,
  maxVersion: 5,
  request: listGroupsRequestSchema,
  response: listGroupsResponseSchema,
});
