import { type DescribeGroupsRequest, describeGroupsRequestSchema, type DescribeGroupsResponse, describeGroupsResponseSchema } from '../../protocol/messages/describe-groups.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/describe-groups.ts';

/** DescribeGroups (key 15). */
export const describeGroupsCodec = schemaApi<DescribeGroupsRequest, DescribeGroupsResponse>({
  name: 'DescribeGroups',
  minVersion: 0,
  maxVersion: 5,
  request: describeGroupsRequestSchema,
  response: describeGroupsResponseSchema,
});
