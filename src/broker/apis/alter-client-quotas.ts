import { type AlterClientQuotasRequest, alterClientQuotasRequestSchema, type AlterClientQuotasResponse, alterClientQuotasResponseSchema } from '../../protocol/messages/alter-client-quotas.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/alter-client-quotas.ts';

/** AlterClientQuotas (key 49): sets or removes quota values of entities; v1 is flexible. */
export const alterClientQuotasCodec = schemaApi<AlterClientQuotasRequest, AlterClientQuotasResponse>({
  name: 'AlterClientQuotas',
  minVersion: 0,
  maxVersion: 1,
  request: alterClientQuotasRequestSchema,
  response: alterClientQuotasResponseSchema,
});
