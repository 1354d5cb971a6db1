import { type ApiVersionsRequest, apiVersionsRequestSchema, type ApiVersionsResponse, apiVersionsResponseSchema } from '../../protocol/messages/api-versions.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/api-versions.ts';

/**
 * ApiVersions (key 18). Its response always goes with response header v0, flexible versions
 * included, and a version the broker does not know gets UNSUPPORTED_VERSION in v0's form, so
 * that the client can fall back (KIP-511): see the router.
 */
export const apiVersionsCodec = schemaApi<ApiVersionsRequest, ApiVersionsResponse>({
  name: 'ApiVersions',
  minVersion: 0,
  maxVersion: 3,
  request: apiVersionsRequestSchema,
  response: apiVersionsResponseSchema,
});
