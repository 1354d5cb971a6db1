import { type InitProducerIdRequest, initProducerIdRequestSchema, type InitProducerIdResponse, initProducerIdResponseSchema } from '../../protocol/messages/init-producer-id.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/init-producer-id.ts';

/** InitProducerId (key 22). */
export const initProducerIdCodec = schemaApi<InitProducerIdRequest, InitProducerIdResponse>({
  name: 'InitProducerId',
  minVersion: 0,
  maxVersion: 4,
  request: initProducerIdRequestSchema,
  response: initProducerIdResponseSchema,
});
