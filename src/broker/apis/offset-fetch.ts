import { type OffsetFetchRequest, offsetFetchRequestSchema, type OffsetFetchResponse, offsetFetchResponseSchema } from '../../protocol/messages/offset-fetch.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/offset-fetch.ts';

/** OffsetFetch (key 9). From v8 a request names several groups, each with its topics. */
export const offsetFetchCodec = schemaApi<OffsetFetchRequest, OffsetFetchResponse>({
  name: 'OffsetFetch',
  minVersion: 0,
  maxVersion: 9,
  request: offsetFetchRequestSchema,
  response: offsetFetchResponseSchema,
});
