/**
 * The client side of the data path's APIs: Metadata v8, Produce v8, Fetch v11, ListOffsets v2 and
 * InitProducerId v1. Field lists follow the broker's codecs in src/broker/apis (the grammar is
 * written out there); fields a version does not carry decode to the broker codec's defaults.
 */
import type { FetchRequest, FetchResponse, FetchResponsePartition } from '../../broker/apis/fetch.ts';
import type { InitProducerIdRequest, InitProducerIdResponse } from '../../broker/apis/init-producer-id.ts';
import type { ListOffsetsRequest, ListOffsetsResponse } from '../../broker/apis/list-offsets.ts';
import type { MetadataRequest, MetadataResponse, MetadataResponsePartition, MetadataResponseTopic } from '../../broker/apis/metadata.ts';
import type { ProducePartitionResponse, ProduceRequest, ProduceResponse } from '../../broker/apis/produce.ts';
import type { KafkaReader } from '../../broker/protocol/reader.ts';
import type { KafkaWriter } from '../../broker/protocol/writer.ts';
import type { ClientApi } from './api.ts';

const int32Of = (reader: KafkaReader): number => reader.int32();
const writeInt32 = (writer: KafkaWriter, value: number): void => void writer.int32(value);

export const metadataApi: ClientApi<MetadataRequest, MetadataResponse> = {
  key: 3,
  name: 'Metadata',
  version: 8,
  encodeRequest(writer, request) {
    writer.nullableArray(request.topics, (w, topic) => w.string(topic.name));
    writer.boolean(request.allowAutoTopicCreation).boolean(request.includeClusterAuthorizedOperations).boolean(request.includeTopicAuthorizedOperations);
  },
  decodeResponse(reader) {
    const throttleTimeMs = reader.int32();
    const brokers = reader.array((r) => ({ nodeId: r.int32(), host: r.string(), port: r.int32(), rack: r.nullableString() }));
    const clusterId = reader.nullableString();
    const controllerId = reader.int32();
    const topics = reader.array(readMetadataTopic);
    const clusterAuthorizedOperations = reader.int32();
    return { throttleTimeMs, brokers, clusterId, controllerId, topics, clusterAuthorizedOperations };
  },
};

function readMetadataTopic(reader: KafkaReader): MetadataResponseTopic {
  const errorCode = reader.int16();
  const name = reader.string();
  const isInternal = reader.boolean();
  const partitions = reader.array(readMetadataPartition);
  const topicAuthorizedOperations = reader.int32();
  return { errorCode, name, isInternal, partitions, topicAuthorizedOperations };
}

function readMetadataPartition(reader: KafkaReader): MetadataResponsePartition {
  const errorCode = reader.int16();
  const partitionIndex = reader.int32();
  const leaderId = reader.int32();
  const leaderEpoch = reader.int32();
  const replicaNodes = reader.array(int32Of, 4);
  const isrNodes = reader.array(int32Of, 4);
  const offlineReplicas = reader.array(int32Of, 4);
  return { errorCode, partitionIndex, leaderId, leaderEpoch, replicaNodes, isrNodes, offlineReplicas };
}

export const produceApi: ClientApi<ProduceRequest, ProduceResponse> = {
  key: 0,
  name: 'Produce',
  version: 8,
  encodeRequest(writer, request) {
    writer.nullableString(request.transactionalId).int16(request.acks).int32(request.timeoutMs);
    writer.array(request.topicData, (w, topic) => {
      w.string(topic.name).array(topic.partitionData, (pw, data) => pw.int32(data.index).nullableBytes(data.records));
    });
  },
  decodeResponse(reader) {
    const responses = reader.array((r) => ({ name: r.string(), partitionResponses: r.array(readProducePartition) }));
    const throttleTimeMs = reader.int32();
    return { responses, throttleTimeMs };
  },
};

function readProducePartition(reader: KafkaReader): ProducePartitionResponse {
  const index = reader.int32();
  const errorCode = reader.int16();
  const baseOffset = reader.int64();
  const logAppendTimeMs = reader.int64();
  const logStartOffset = reader.int64();
  const recordErrors = reader.array((r) => ({ batchIndex: r.int32(), batchIndexErrorMessage: r.nullableString() }));
  const errorMessage = reader.nullableString();
  return { index, errorCode, baseOffset, logAppendTimeMs, logStartOffset, recordErrors, errorMessage };
}

export const fetchApi: ClientApi<FetchRequest, FetchResponse> = {
  key: 1,
  name: 'Fetch',
  version: 11,
  encodeRequest(writer, request) {
    writer.int32(request.replicaId).int32(request.maxWaitMs).int32(request.minBytes).int32(request.maxBytes);
    writer.int8(request.isolationLevel).int32(request.sessionId).int32(request.sessionEpoch);
    writer.array(request.topics, (w, topic) => {
      w.string(topic.topic).array(topic.partitions, (pw, p) => {
        pw.int32(p.partition).int32(p.currentLeaderEpoch).int64(p.fetchOffset).int64(p.logStartOffset).int32(p.partitionMaxBytes);
      });
    });
    writer.array(request.forgottenTopicsData, (w, topic) => w.string(topic.topic).array(topic.partitions, writeInt32));
    writer.string(request.rackId);
  },
  decodeResponse(reader) {
    const throttleTimeMs = reader.int32();
    const errorCode = reader.int16();
    const sessionId = reader.int32();
    const responses = reader.array((r) => ({ topic: r.string(), partitions: r.array(readFetchPartition) }));
    return { throttleTimeMs, errorCode, sessionId, responses };
  },
};

/** The records come back as one view of the response (its batches, the last possibly cut short). */
function readFetchPartition(reader: KafkaReader): FetchResponsePartition {
  const partitionIndex = reader.int32();
  const errorCode = reader.int16();
  const highWatermark = reader.int64();
  const lastStableOffset = reader.int64();
  const logStartOffset = reader.int64();
  const abortedTransactions = readNullableArray(reader, (r) => ({ producerId: r.int64(), firstOffset: r.int64() }));
  const preferredReadReplica = reader.int32();
  const records = reader.nullableBytes();
  return { partitionIndex, errorCode, highWatermark, lastStableOffset, logStartOffset, abortedTransactions, preferredReadReplica, records: records === null ? null : [records] };
}

function readNullableArray<T>(reader: KafkaReader, readElement: (reader: KafkaReader) => T): T[] | null {
  const length = reader.arrayLength();
  return length < 0 ? null : Array.from({ length }, () => readElement(reader));
}

export const listOffsetsApi: ClientApi<ListOffsetsRequest, ListOffsetsResponse> = {
  key: 2,
  name: 'ListOffsets',
  version: 2,
  encodeRequest(writer, request) {
    writer.int32(request.replicaId).int8(request.isolationLevel);
    writer.array(request.topics, (w, topic) => w.string(topic.name).array(topic.partitions, (pw, p) => pw.int32(p.partitionIndex).int64(p.timestamp)));
  },
  decodeResponse(reader) {
    const throttleTimeMs = reader.int32();
    const topics = reader.array((r) => ({
      name: r.string(),
      partitions: r.array((pr) => ({ partitionIndex: pr.int32(), errorCode: pr.int16(), oldStyleOffsets: [], timestamp: pr.int64(), offset: pr.int64(), leaderEpoch: -1 })),
    }));
    return { throttleTimeMs, topics };
  },
};

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
