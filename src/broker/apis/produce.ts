import { type ProduceRequest, produceRequestSchema, type ProduceResponse, produceResponseSchema } from '../../protocol/messages/produce.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/produce.ts';

/**
 * Produce (key 0). Versions 0-2 carry the old message formats (magic 0 and 1), which Kafka 4 no
 * longer serves (KIP-896) and neither does Ferry: they are not advertised, and a request in one
 * of them is answered with UNSUPPORTED_VERSION for each partition (see the binding). The records
 * stay a view of the request frame, handed on to the log without a copy.
 */
export const produceCodec = schemaApi<ProduceRequest, ProduceResponse>({
  name: 'Produce',
  minVersion: 3,
  maxVersion: 12,
  request: produceRequestSchema,
  response: produceResponseSchema,
});
