import { type AlterConfigsRequest, alterConfigsRequestSchema, type AlterConfigsResponse, alterConfigsResponseSchema } from '../../protocol/messages/alter-configs.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/alter-configs.ts';

/** AlterConfigs (key 33): replaces every dynamic config of a resource with the ones given. */
export const alterConfigsCodec = schemaApi<AlterConfigsRequest, AlterConfigsResponse>({
  name: 'AlterConfigs',
  minVersion: 0,
  maxVersion: 2,
  request: alterConfigsRequestSchema,
  response: alterConfigsResponseSchema,
});
