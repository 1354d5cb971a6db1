import { type MetadataRequest, metadataRequestSchema, type MetadataResponse, metadataResponseSchema } from '../../protocol/messages/metadata.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/metadata.ts';

/** Metadata (key 3). In v0 an empty topic list means every topic; from v1 a null one does. From v10 topics carry their ids. */
export const metadataCodec = schemaApi<MetadataRequest, MetadataResponse>({
  name: 'Metadata',
  minVersion: 0,
  maxVersion: 11,
  request: metadataRequestSchema,
  response: metadataResponseSchema,
});
