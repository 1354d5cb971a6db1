import { type CreateAclsRequest, createAclsRequestSchema, type CreateAclsResponse, createAclsResponseSchema } from '../../protocol/messages/create-acls.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/create-acls.ts';

/** CreateAcls (key 30). */
export const createAclsCodec = schemaApi<CreateAclsRequest, CreateAclsResponse>({
  name: 'CreateAcls',
  // v0 stays served, though Kafka 4.0 removed it (KIP-896): sarama 1.22.1's ClusterAdmin sends v0.
  minVersion: 0,
  maxVersion: 3,
  request: createAclsRequestSchema,
  response: createAclsResponseSchema,
});
