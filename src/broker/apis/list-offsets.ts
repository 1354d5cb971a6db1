import { type ListOffsetsRequest, listOffsetsRequestSchema, type ListOffsetsResponse, listOffsetsResponseSchema } from '../../protocol/messages/list-offsets.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/list-offsets.ts';

/** ListOffsets (key 2); v8 adds EARLIEST_LOCAL (-4), v9 LATEST_TIERED (-5) timestamps (KIP-405, KIP-1005). */
export const listOffsetsCodec = schemaApi<ListOffsetsRequest, ListOffsetsResponse>({
  name: 'ListOffsets',
  minVersion: 0,
  maxVersion: 10,
  request: listOffsetsRequestSchema,
  response: listOffsetsResponseSchema,
});
