/**
 * The client side of the data path's APIs: Metadata v8, Produce v8, Fetch v11, ListOffsets v2 and
 * InitProducerId v1. Field lists follow the broker's codecs in src/broker/apis (the grammar is
 * written out there); fields a version does not carry decode to the broker codec's defaults.
 */
import type { InitProducerIdRequest, InitProducerIdResponse } from '../../broker/apis/init-producer-id.ts';
import { type FetchRequest, fetchRequestSchema, type FetchResponse, fetchResponseSchema } from '../../broker/protocol/messages/fetch.ts';
import { type ListOffsetsRequest, listOffsetsRequestSchema, type ListOffsetsResponse, listOffsetsResponseSchema } from '../../broker/protocol/messages/list-offsets.ts';
import { type MetadataRequest, metadataRequestSchema, type MetadataResponse, metadataResponseSchema } from '../../broker/protocol/messages/metadata.ts';
import { type ProduceRequest, produceRequestSchema, type ProduceResponse, produceResponseSchema } from '../../broker/protocol/messages/produce.ts';
import { type ClientApi, schemaClientApi } from './api.ts';

export const metadataApi = schemaClientApi<MetadataRequest, MetadataResponse>('Metadata', 8, metadataRequestSchema, metadataResponseSchema);
export const produceApi = schemaClientApi<ProduceRequest, ProduceResponse>('Produce', 8, produceRequestSchema, produceResponseSchema);
/** The records of a partition come back as one view of the response (its batches, the last possibly cut short). */
export const fetchApi = schemaClientApi<FetchRequest, FetchResponse>('Fetch', 11, fetchRequestSchema, fetchResponseSchema);
export const listOffsetsApi = schemaClientApi<ListOffsetsRequest, ListOffsetsResponse>('ListOffsets', 2, listOffsetsRequestSchema, listOffsetsResponseSchema);

export const initProducerIdApi: ClientApi<InitProducerIdRequest, InitProducerIdResponse> = {
  key: 22,
  name: 'InitProducerId',
  version: 1,
  encodeRequest(writer, request) {
    writer.nullableString(request.transactionalId).int32(request.transactionTimeoutMs);
  },
  decodeResponse(reader) {
    return { throttleTimeMs: reader.int32(), errorCode: reader.int16(), producerId: reader.int64(), producerEpoch: reader.int16() };
  },
};
