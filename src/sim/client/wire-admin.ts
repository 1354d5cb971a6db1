/** The client side of CreateTopics v4 and DeleteTopics v3 (grammar in src/broker/apis). */
import type { CreateTopicsRequest, CreateTopicsResponse } from '../../broker/apis/create-topics.ts';
import type { DeleteTopicsRequest, DeleteTopicsResponse } from '../../broker/apis/delete-topics.ts';
import type { ClientApi } from './api.ts';

export const createTopicsApi: ClientApi<CreateTopicsRequest, CreateTopicsResponse> = {
  key: 19,
  name: 'CreateTopics',
  version: 4,
  encodeRequest(writer, request) {
    writer.array(request.topics, (w, topic) => {
      w.string(topic.name).int32(topic.numPartitions).int16(topic.replicationFactor);
      w.array(topic.assignments, (aw, a) => aw.int32(a.partitionIndex).array(a.brokerIds, (bw, id) => bw.int32(id)));
      w.array(topic.configs, (cw, c) => cw.string(c.name).nullableString(c.value));
    });
    writer.int32(request.timeoutMs).boolean(request.validateOnly);
  },
  decodeResponse(reader) {
    const throttleTimeMs = reader.int32();
    const topics = reader.array((r) => ({ name: r.string(), errorCode: r.int16(), errorMessage: r.nullableString() }));
    return { throttleTimeMs, topics };
  },
};

export const deleteTopicsApi: ClientApi<DeleteTopicsRequest, DeleteTopicsResponse> = {
  key: 20,
  name: 'DeleteTopics',
  version: 3,
  encodeRequest(writer, request) {
    writer.array(request.topicNames, (w, name) => w.string(name)).int32(request.timeoutMs);
  },
  decodeResponse(reader) {
    const throttleTimeMs = reader.int32();
    const responses = reader.array((r) => ({ name: r.string(), errorCode: r.int16() }));
    return { throttleTimeMs, responses };
  },
};
