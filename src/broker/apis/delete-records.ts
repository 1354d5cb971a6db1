import { type DeleteRecordsRequest, deleteRecordsRequestSchema, type DeleteRecordsResponse, deleteRecordsResponseSchema } from '../../protocol/messages/delete-records.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/delete-records.ts';

/** DeleteRecords (key 21). */
export const deleteRecordsCodec = schemaApi<DeleteRecordsRequest, DeleteRecordsResponse>({
  name: 'DeleteRecords',
  minVersion: 0,
  maxVersion: 2,
  request: deleteRecordsRequestSchema,
  response: deleteRecordsResponseSchema,
});
