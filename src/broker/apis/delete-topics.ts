import { type DeleteTopicsRequest, deleteTopicsRequestSchema, type DeleteTopicsResponse, deleteTopicsResponseSchema } from '../../protocol/messages/delete-topics.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/delete-topics.ts';

/** DeleteTopics (key 20); from v6 topics may be named by id. */
export const deleteTopicsCodec = schemaApi<DeleteTopicsRequest, DeleteTopicsResponse>({
  name: 'DeleteTopics',
  minVersion: 0,
  maxVersion: 6,
  request: deleteTopicsRequestSchema,
  response: deleteTopicsResponseSchema,
});
