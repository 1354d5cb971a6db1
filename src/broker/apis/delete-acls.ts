import { type DeleteAclsRequest, deleteAclsRequestSchema, type DeleteAclsResponse, deleteAclsResponseSchema } from '../../protocol/messages/delete-acls.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/delete-acls.ts';

/** DeleteAcls (key 31). */
export const deleteAclsCodec = schemaApi<DeleteAclsRequest, DeleteAclsResponse>({
  name: 'DeleteAcls',
  // v0 stays served, though Kafka 4.0 removed it (KIP-896): sarama 1.22.1's ClusterAdmin sends v0.
  minVersion: 0,
  maxVersion: 3,
  request: deleteAclsRequestSchema,
  response: deleteAclsResponseSchema,
});
