import type { FetchRequest, FetchResponse, FetchResponsePartition } from '../apis/fetch.ts';
import type { BrokerContext } from '../context.ts';
import { ErrorCode } from '../protocol/error-codes.ts';
import { errorCodeOf, notServedCode } from './errors.ts';

/** Kafka's fetch.max.wait.ms bound: a long poll never holds a connection longer than this. */
export const FETCH_WAIT_MS_MAX = 30_000;
/**
 * Kafka's fetch.max.bytes (55 MiB): the most one Fetch response holds, whatever the client asks
 * (a response is read into memory and held until the client has read it; v0-v2 requests ask
 * for 2^31-1). The first batch still goes whole if it alone is larger, as in Kafka. A larger
 * value lets consumers catch up in fewer round trips at that much memory per slow reader.
 */
export const FETCH_RESPONSE_BYTES_MAX = 55 * 1024 * 1024;
/** No preferred read replica (KIP-392): one broker serves every partition. */
const NO_PREFERRED_REPLICA = -1;

/**
 * Reads whole batches (views of the log's read buffers, sent without copying into the response)
 * up to each partition's limit and the request's total; if fewer than min_bytes are ready, waits
 * up to max_wait_ms for any requested partition to grow, then reads again (long poll).
 */
export async function handleFetch(context: BrokerContext, request: FetchRequest): Promise<FetchResponse> {
  if (request.replicaId >= 0) return noteReplicaProgress(context, request);
  let response = read(context, request);
  if (bytesIn(response) < request.minBytes && request.maxWaitMs > 0) {
    await waitForAny(context, request, response);
    response = read(context, request);
  }
  return response;
}

function read(context: BrokerContext, request: FetchRequest): FetchResponse {
  let budget = request.maxBytes > 0 ? Math.min(request.maxBytes, FETCH_RESPONSE_BYTES_MAX) : FETCH_RESPONSE_BYTES_MAX;
  const responses = request.topics.map((topic) => ({
    topic: topic.topic,
    partitions: topic.partitions.map((partition): FetchResponsePartition => {
      const index = partition.partition;
      const notServed = notServedCode(context, topic.topic, index);
      if (notServed !== null) return partitionResponse(index, notServed);
      try {
        // KIP-320: a stale or future current_leader_epoch is refused before any redirect or read, as Kafka does.
        context.engine.checkLeaderEpoch(topic.topic, index, partition.currentLeaderEpoch);
        const preferred = preferredReadReplica(context, request, topic.topic, index);
        if (preferred !== NO_PREFERRED_REPLICA) return partitionResponse(index, ErrorCode.NONE, { preferredReadReplica: preferred });
        // Kafka returns the first batch even past the limits, but only while nothing else filled the response.
        const maxBytes = budget <= 0 ? 0 : Math.max(1, Math.min(partition.partitionMaxBytes, budget));
        const result = context.engine.fetch(topic.topic, index, partition.fetchOffset, { maxBytes });
        budget -= result.batches.reduce((sum, batch) => sum + batch.sizeInBytes, 0);
        const { highWatermark, logStartOffset } = result;
        return partitionResponse(index, ErrorCode.NONE, { highWatermark, lastStableOffset: highWatermark, logStartOffset, records: result.batches.map((batch) => batch.bytes) });
      } catch (error) {
        return partitionResponse(index, errorCodeOf(error));
      }
    }),
  }));
  return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, sessionId: 0, responses };
}

/** A partition's answer: Kafka's "unknown" values unless given (records empty, never null: old clients misread null). */
function partitionResponse(partitionIndex: number, errorCode: number, fields: Partial<FetchResponsePartition> = {}): FetchResponsePartition {
  return { partitionIndex, errorCode, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1, abortedTransactions: null, preferredReadReplica: NO_PREFERRED_REPLICA, records: [], ...fields };
}

/**
 * KIP-392: a consumer that names its rack (client.rack) is sent to a follower in that rack when
 * the leader is elsewhere, so its reads stay in its zone. Only the leader redirects; followers
 * serve what they have, up to what they applied from the WAL.
 */
function preferredReadReplica(context: BrokerContext, request: FetchRequest, topic: string, partition: number): number {
  const consumer = request.replicaId < 0;
  if (!consumer || request.rackId === '' || context.rack === request.rackId || !context.engine.leads(topic, partition)) return NO_PREFERRED_REPLICA;
  return context.topology.followersOf(topic, partition).find((broker) => broker.rack === request.rackId)?.nodeId ?? NO_PREFERRED_REPLICA;
}

/** A follower broker's Fetch: its fetch offsets are its log end offsets (acks=all and the high watermark count them). */
function noteReplicaProgress(context: BrokerContext, request: FetchRequest): FetchResponse {
  const responses = request.topics.map((topic) => ({
    topic: topic.topic,
    partitions: topic.partitions.map((partition) => {
      context.engine.noteReplicaProgress(topic.topic, partition.partition, `broker-${request.replicaId}`, partition.fetchOffset);
      return partitionResponse(partition.partition, ErrorCode.NONE);
    }),
  }));
  return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, sessionId: 0, responses };
}

function bytesIn(response: FetchResponse): number {
  let bytes = 0;
  for (const topic of response.responses) for (const partition of topic.partitions) for (const batch of partition.records ?? []) bytes += batch.length;
  return bytes;
}

/** Waits until a requested partition has data at its fetch offset, or max_wait_ms. */
async function waitForAny(context: BrokerContext, request: FetchRequest, first: FetchResponse): Promise<void> {
  const controller = new AbortController();
  const waits: Promise<void>[] = [];
  request.topics.forEach((topic, t) => topic.partitions.forEach((partition, p) => {
    if (first.responses[t]!.partitions[p]!.errorCode !== ErrorCode.NONE) return;
    waits.push(context.engine.waitForData(topic.topic, partition.partition, partition.fetchOffset, controller.signal));
  }));
  const timer = context.clock.setTimer(Math.min(request.maxWaitMs, FETCH_WAIT_MS_MAX), () => controller.abort());
  await Promise.race([...waits, new Promise<void>((resolve) => controller.signal.addEventListener('abort', () => resolve(), { once: true }))]);
  timer.cancel();
  controller.abort();
}
