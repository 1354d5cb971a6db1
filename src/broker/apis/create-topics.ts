import { type CreateTopicsRequest, createTopicsRequestSchema, type CreateTopicsResponse, createTopicsResponseSchema } from '../../protocol/messages/create-topics.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/create-topics.ts';

/** CreateTopics (key 19). */
export const createTopicsCodec = schemaApi<CreateTopicsRequest, CreateTopicsResponse>({
  name: 'CreateTopics',
  minVersion: 0,
  maxVersion: 7,
  request: createTopicsRequestSchema,
  response: createTopicsResponseSchema,
});
