import { type DescribeProducersRequest, describeProducersRequestSchema, type DescribeProducersResponse, describeProducersResponseSchema } from '../../protocol/messages/describe-producers.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/describe-producers.ts';

/** DescribeProducers (key 61, KIP-664). */
export const describeProducersCodec = schemaApi<DescribeProducersRequest, DescribeProducersResponse>({
  name: 'DescribeProducers',
  minVersion: 0,
  maxVersion: 0,
  request: describeProducersRequestSchema,
  response: describeProducersResponseSchema,
});
