import {
  type IncrementalAlterConfigsRequest,
  incrementalAlterConfigsRequestSchema,
  type IncrementalAlterConfigsResponse,
  incrementalAlterConfigsResponseSchema,
} from '../../protocol/messages/incremental-alter-configs.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/incremental-alter-configs.ts';

/** IncrementalAlterConfigs (key 44, KIP-339): set, delete, append to or subtract from single configs. */
export const incrementalAlterConfigsCodec = schemaApi<IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse>({
  name: 'IncrementalAlterConfigs',
  minVersion: 0,
  maxVersion: 1,
  request: incrementalAlterConfigsRequestSchema,
  response: incrementalAlterConfigsResponseSchema,
});
