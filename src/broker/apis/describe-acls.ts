import { type DescribeAclsRequest, describeAclsRequestSchema, type DescribeAclsResponse, describeAclsResponseSchema } from '../../protocol/messages/describe-acls.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/describe-acls.ts';

/** DescribeAcls (key 29). */
export const describeAclsCodec = schemaApi<DescribeAclsRequest, DescribeAclsResponse>({
  name: 'DescribeAcls',
  // v0 stays served, though Kafka 4.0 removed it (KIP-896): sarama 1.22.1's ClusterAdmin sends v0.
  minVersion: 0,
  maxVersion: 3,
  request: describeAclsRequestSchema,
  response: describeAclsResponseSchema,
});
