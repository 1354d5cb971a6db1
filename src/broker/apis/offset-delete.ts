import { type OffsetDeleteRequest, offsetDeleteRequestSchema, type OffsetDeleteResponse, offsetDeleteResponseSchema } from '../../protocol/messages/offset-delete.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/offset-delete.ts';

/** OffsetDelete (key 47, KIP-496). */
export const offsetDeleteCodec = schemaApi<OffsetDeleteRequest, OffsetDeleteResponse>({
  name: 'OffsetDelete',
  minVersion: 0,
  maxVersion: 0,
  request: offsetDeleteRequestSchema,
  response: offsetDeleteResponseSchema,
});
