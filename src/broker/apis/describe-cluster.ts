import { type DescribeClusterRequest, describeClusterRequestSchema, type DescribeClusterResponse, describeClusterResponseSchema } from '../../protocol/messages/describe-cluster.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/describe-cluster.ts';

/** DescribeCluster (key 60, KIP-700). */
export const describeClusterCodec = schemaApi<DescribeClusterRequest, DescribeClusterResponse>({
  name: 'DescribeCluster',
  minVersion: 0,
  maxVersion: 1,
  request: describeClusterRequestSchema,
  response: describeClusterResponseSchema,
});
