import {
  type DescribeClientQuotasRequest,
  describeClientQuotasRequestSchema,
  type DescribeClientQuotasResponse,
  describeClientQuotasResponseSchema,
} from '../../protocol/messages/describe-client-quotas.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/describe-client-quotas.ts';

/** DescribeClientQuotas (key 48): the quotas of the entities a filter matches; v1 is flexible. */
export const describeClientQuotasCodec = schemaApi<DescribeClientQuotasRequest, DescribeClientQuotasResponse>({
  name: 'DescribeClientQuotas',
  minVersion: 0,
  maxVersion: 1,
  request: describeClientQuotasRequestSchema,
  response: describeClientQuotasResponseSchema,
});
