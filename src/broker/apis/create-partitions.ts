import { type CreatePartitionsRequest, createPartitionsRequestSchema, type CreatePartitionsResponse, createPartitionsResponseSchema } from '../../protocol/messages/create-partitions.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/create-partitions.ts';

/** CreatePartitions (key 37). */
export const createPartitionsCodec = schemaApi<CreatePartitionsRequest, CreatePartitionsResponse>({
  name: 'CreatePartitions',
  minVersion: 0,
  maxVersion: 3,
  request: createPartitionsRequestSchema,
  response: createPartitionsResponseSchema,
});
