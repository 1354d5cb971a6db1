import type { KafkaReader } from '../protocol/reader.ts';
import type { KafkaWriter } from '../protocol/writer.ts';
import type { ApiCodec } from './api.ts';

// InitProducerId (key 22), versions 0-1; 2 is the first flexible version (not supported).
// (v3 adds producer_id and producer_epoch to the request, for a producer resuming after an error.)
// Request:
//   transactional_id NULLABLE_STRING              null for an idempotent, non-transactional producer
//   transaction_timeout_ms INT32
// Response:
//   throttle_time_ms INT32
//   error_code INT16
//   producer_id INT64
//   producer_epoch INT16
// Versions 0 and 1 have the same fields; from v1 the broker answers before throttling (KIP-219).

export interface InitProducerIdRequest {
  readonly transactionalId: string | null;
  readonly transactionTimeoutMs: number;
}

export interface InitProducerIdResponse {
  readonly throttleTimeMs: number;
  readonly errorCode: number;
  /** -1 with an error. */
  readonly producerId: number;
  readonly producerEpoch: number;
}

export const initProducerIdCodec: ApiCodec<InitProducerIdRequest, InitProducerIdResponse> = {
  key: 22,
  name: 'InitProducerId',
  minVersion: 0,
  maxVersion: 1,
  flexibleFrom: 2,
  decodeRequest(reader: KafkaReader): InitProducerIdRequest {
    const transactionalId = reader.nullableString();
    const transactionTimeoutMs = reader.int32();
    return { transactionalId, transactionTimeoutMs };
  },
  encodeResponse(writer: KafkaWriter, _version: number, response: InitProducerIdResponse): void {
    writer.int32(response.throttleTimeMs).int16(response.errorCode).int64(response.producerId).int16(response.producerEpoch);
  },
};
