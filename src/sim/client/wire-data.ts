/**
 * The client side of the data path's APIs: Metadata v8, Produce v8, Fetch v11, ListOffsets v2 and
 * InitProducerId v1, read and written by Kafka's schemas (src/protocol/messages).
 */
import { type InitProducerIdRequest, initProducerIdRequestSchema, type InitProducerIdResponse, initProducerIdResponseSchema } from '../../protocol/messages/init-producer-id.ts';
import { type FetchRequest, fetchRequestSchema, type FetchResponse, fetchResponseSchema } from '../../protocol/messages/fetch.ts';
import { type ListOffsetsRequest, listOffsetsRequestSchema, type ListOffsetsResponse, listOffsetsResponseSchema } from '../../protocol/messages/list-offsets.ts';
import { type MetadataRequest, metadataRequestSchema, type MetadataResponse, metadataResponseSchema } from '../../protocol/messages/metadata.ts';
import { type ProduceRequest, produceRequestSchema, type ProduceResponse, produceResponseSchema } from '../../protocol/messages/produce.ts';
import { schemaClientApi } from './api.ts';

export const metadataApi = schemaClientApi<MetadataRequest, MetadataResponse>('Metadata', 8, metadataRequestSchema, metadataResponseSchema);
export const produceApi = schemaClientApi<ProduceRequest, ProduceResponse>('Produce', 8, produceRequestSchema, produceResponseSchema);
/** The records of a partition come back as one view of the response (its batches, the last possibly cut short). */
export const fetchApi = schemaClientApi<FetchRequest, FetchResponse>('Fetch', 11, fetchRequestSchema, fetchResponseSchema);
export const listOffsetsApi = schemaClientApi<ListOffsetsRequest, ListOffsetsResponse>('ListOffsets', 2, listOffsetsRequestSchema, listOffsetsResponseSchema);

export const initProducerIdApi = schemaClientApi<InitProducerIdRequest, InitProducerIdResponse>('InitProducerId', 1, initProducerIdRequestSchema, initProducerIdResponseSchema);
