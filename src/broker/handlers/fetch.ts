import type { FetchableTopicResponse, FetchRequest, FetchResponse, FetchTopic, PartitionData } from '../apis/fetch.ts';
import type { BrokerContext } from '../context.ts';
import type { Session } from '../../security/session.ts';
import { allowedNames, allowedOnCluster, LOCAL_SESSION } from './authorize.ts';
import { AclOperation, ResourceType } from '../../security/acl/model.ts';
import type { FetchResult } from '../../engine/index.ts';
import type { ReadAllocator } from '../../log/segment.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { ZERO_UUID } from '../../util/uuid.ts';
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
/** ListOffsets' special timestamp of the high watermark. */
const LATEST_TIMESTAMP = -1;

/**
 * Reads whole batches (views of the log's read buffers, sent without copying into the response;
 * read into `allocate`'s memory, the connection's reused buffers, when given) up to each
 * partition's limit and the request's total; if fewer than min_bytes are ready, waits
 * up to max_wait_ms for any requested partition to grow, then reads again (long poll).
 * Authorized as Kafka's KafkaApis.handleFetchRequest: a follower needs CLUSTER_ACTION on the
 * cluster (else TOPIC_AUTHORIZATION_FAILED for every partition); a consumer needs READ on each
 * topic (TOPIC_AUTHORIZATION_FAILED), checked after an unknown topic id (UNKNOWN_TOPIC_ID: ids
 * are not secret) and before the topic's existence.
 */
export async function handleFetch(context: BrokerContext, request: FetchRequest, session: Session = LOCAL_SESSION, allocate?: ReadAllocator): Promise<FetchResponse> {
  if (replicaIdOf(request) >= 0) {
    if (!allowedOnCluster(context, session, AclOperation.CLUSTER_ACTION)) return everyPartitionFailed(request, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
    return noteReplicaProgress(context, request, session);
  }
  const names = request.topics.map((topic) => topicNameOf(context, topic)).filter((name) => name !== null);
  const readable = allowedNames(context, session, AclOperation.READ, ResourceType.TOPIC, names);
  let response = await read(context, request, readable, allocate);
  if (bytesIn(response) < request.minBytes && request.maxWaitMs > 0) {
    await waitForAny(context, request, response);
    response = await read(context, request, readable, allocate);
  }
  return response;
}

/** KIP-896: Fetch v0-v3 read message formats 0 and 1, which Kafka 4 and Ferry no longer serve: UNSUPPORTED_VERSION for every partition. */
export function refuseOldFetch(request: FetchRequest): FetchResponse {
  return everyPartitionFailed(request, ErrorCode.UNSUPPORTED_VERSION);
}

function everyPartitionFailed(request: FetchRequest, errorCode: number): FetchResponse {
  const responses = request.topics.map((topic) =>
    topicResponse(
      topic,
      topic.partitions.map((partition) => partitionResponse(partition.partition, errorCode)),
    ),
  );
  return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, sessionId: 0, responses };
}

/** Kafka's replica id of a consumer; from v15 a replica names itself in replica_state instead (KIP-903). */
const CONSUMER_REPLICA_ID = -1;

function replicaIdOf(request: FetchRequest): number {
  return request.replicaState.replicaId !== CONSUMER_REPLICA_ID ? request.replicaState.replicaId : request.replicaId;
}

/** The topic a request entry names: by id from v13 (KIP-516), else by name; null for an id not known here. */
function topicNameOf(context: BrokerContext, topic: Pick<FetchTopic, 'topic' | 'topicId'>): string | null {
  return topic.topicId === ZERO_UUID ? topic.topic : context.topology.topicName(topic.topicId);
}

/** A topic's answer names it as the request did (the version writes the one it has). */
function topicResponse(topic: FetchTopic, partitions: PartitionData[]): FetchableTopicResponse {
  return { topic: topic.topic, topicId: topic.topicId, partitions };
}

async function read(context: BrokerContext, request: FetchRequest, readable: ReadonlySet<string>, allocate: ReadAllocator | undefined): Promise<FetchResponse> {
  const budget = { bytes: request.maxBytes > 0 ? Math.min(request.maxBytes, FETCH_RESPONSE_BYTES_MAX) : FETCH_RESPONSE_BYTES_MAX };
  const responses = [];
  for (const topic of request.topics) {
    const name = topicNameOf(context, topic);
    const partitions: PartitionData[] = [];
    for (const partition of topic.partitions) {
      if (name === null || !readable.has(name)) {
        partitions.push(partitionResponse(partition.partition, name === null ? ErrorCode.UNKNOWN_TOPIC_ID : ErrorCode.TOPIC_AUTHORIZATION_FAILED));
        continue;
      }
      const answer = readPartition(context, request, name, partition, budget, allocate);
      partitions.push(answer instanceof Promise ? await answer : answer); // only a read from the tier waits: local reads stay synchronous
    }
    responses.push(topicResponse(topic, partitions));
  }
  return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, sessionId: 0, responses };
}

/** One partition's answer, taken from the response's byte budget; read from the tier below the local log start [D2] (then a promise). */
function readPartition(
  context: BrokerContext,
  request: FetchRequest,
  topic: string,
  partition: FetchRequest['topics'][number]['partitions'][number],
  budget: { bytes: number },
  allocate: ReadAllocator | undefined,
): PartitionData | Promise<PartitionData> {
  const index = partition.partition;
  const notServed = notServedCode(context, topic, index);
  if (notServed !== null) return partitionResponse(index, notServed);
  try {
    // KIP-320: a stale or future current_leader_epoch is refused before any redirect or read, as Kafka does.
    context.engine.checkLeaderEpoch(topic, index, partition.currentLeaderEpoch);
    const preferred = preferredReadReplica(context, request, topic, index, partition.fetchOffset);
    if (preferred !== NO_PREFERRED_REPLICA) return partitionResponse(index, ErrorCode.NONE, { preferredReadReplica: preferred });
    // Kafka returns the first batch even past the limits, but only while nothing else filled the response.
    const maxBytes = budget.bytes <= 0 ? 0 : Math.max(1, Math.min(partition.partitionMaxBytes, budget.bytes));
    if (partition.fetchOffset < context.engine.localLogStartOffset(topic, index)) return readFromTier(context, topic, index, partition.fetchOffset, maxBytes, budget);
    return answered(index, context.engine.fetch(topic, index, partition.fetchOffset, allocate === undefined ? { maxBytes } : { maxBytes, allocate }), budget);
  } catch (error) {
    return partitionResponse(index, errorCodeOf(error));
  }
}

async function readFromTier(context: BrokerContext, topic: string, index: number, fetchOffset: number, maxBytes: number, budget: { bytes: number }): Promise<PartitionData> {
  try {
    return answered(index, await context.engine.fetchWithTier(topic, index, fetchOffset, { maxBytes }), budget);
  } catch (error) {
    return partitionResponse(index, errorCodeOf(error));
  }
}

/** A read's answer, its bytes taken from the response's budget. */
function answered(index: number, result: FetchResult, budget: { bytes: number }): PartitionData {
  budget.bytes -= result.batches.reduce((sum, batch) => sum + batch.sizeInBytes, 0);
  const { highWatermark, logStartOffset } = result;
  return partitionResponse(index, ErrorCode.NONE, { highWatermark, lastStableOffset: highWatermark, logStartOffset, records: result.batches.map((batch) => batch.bytes) });
}

/** A partition's answer: Kafka's "unknown" values unless given (records empty, never null: old clients misread null). */
function partitionResponse(partitionIndex: number, errorCode: number, fields: Partial<PartitionData> = {}): PartitionData {
  return { partitionIndex, errorCode, highWatermark: -1, lastStableOffset: -1, logStartOffset: -1, abortedTransactions: null, preferredReadReplica: NO_PREFERRED_REPLICA, records: [], ...fields };
}

/**
 * KIP-392: a consumer that names its rack (client.rack) is sent to a follower in that rack when
 * the leader is elsewhere, so its reads stay in its zone. Only the leader redirects, and only to an
 * in-sync follower that reported holding the fetch offset (as Kafka's replica selector), or the
 * consumer would bounce between a follower that lacks it and the leader; followers serve what
 * they have, up to what they applied from the WAL.
 */
function preferredReadReplica(context: BrokerContext, request: FetchRequest, topic: string, partition: number, fetchOffset: number): number {
  const consumer = replicaIdOf(request) < 0;
  if (!consumer || request.rackId === '' || context.rack === request.rackId || !context.engine.leads(topic, partition)) return NO_PREFERRED_REPLICA;
  const holds = (nodeId: number) => (context.engine.inSyncReplicaEnd(topic, partition, `broker-${nodeId}`) ?? -1) >= fetchOffset;
  return context.topology.followersOf(topic, partition).find((broker) => broker.rack === request.rackId && holds(broker.nodeId))?.nodeId ?? NO_PREFERRED_REPLICA;
}

/**
 * A follower broker's Fetch, [R2] of docs/cluster-protocol.md: its fetch offsets are its log end
 * offsets (acks=all and the high watermark count them), and the answer tells it the high
 * watermark, which caps its own. Only a broker with a live lease, connecting from its registered
 * address, counts, and only for partitions whose replica set holds it (the engine's in-sync
 * replicas); anything else gets NOT_LEADER_OR_FOLLOWER and changes nothing. A report in another
 * leader epoch than the partition's gets FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH and changes
 * nothing either; one without an epoch (-1) is not counted. With an inter-broker listener
 * configured, a report that arrived on another listener is not a broker's either.
 */
async function noteReplicaProgress(context: BrokerContext, request: FetchRequest, session: Session): Promise<FetchResponse> {
  const replicaId = replicaIdOf(request);
  const interBroker = context.security.interBrokerListener;
  const genuine = (interBroker === null || session.listenerName === interBroker) && (await context.topology.isReplicaConnection(replicaId, session.clientAddress));
  const responses = request.topics.map((topic) => {
    const name = topicNameOf(context, topic);
    return topicResponse(
      topic,
      topic.partitions.map((partition) => {
        const index = partition.partition;
        if (name === null) return partitionResponse(index, ErrorCode.UNKNOWN_TOPIC_ID);
        let counted: boolean;
        try {
          // [R2] Counted only in the leader's epoch: another is FENCED_LEADER_EPOCH or UNKNOWN_LEADER_EPOCH (KIP-320), -1 not at all.
          // [R6] Its log start too: DeleteRecords waits for the in-sync followers' to reach the new start.
          counted = genuine && context.engine.noteReplicaProgress(name, index, `broker-${replicaId}`, partition.fetchOffset, partition.currentLeaderEpoch, partition.logStartOffset);
        } catch (error) {
          return partitionResponse(index, errorCodeOf(error));
        }
        if (!counted) return partitionResponse(index, ErrorCode.NOT_LEADER_OR_FOLLOWER);
        const highWatermark = context.engine.offsetFor(name, index, LATEST_TIMESTAMP).offset;
        // [R6] DeleteRecords' start, which the follower takes up (not retention's: the follower's log and the tier keep what it took from this disk).
        const logStartOffset = context.engine.deletedBeforeOffset(name, index);
        return partitionResponse(index, ErrorCode.NONE, { highWatermark, lastStableOffset: highWatermark, logStartOffset });
      }),
    );
  });
  return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, sessionId: 0, responses };
}

function bytesIn(response: FetchResponse): number {
  let bytes = 0;
  for (const topic of response.responses) for (const partition of topic.partitions) bytes += recordsBytes(partition.records);
  return bytes;
}

function recordsBytes(records: PartitionData['records']): number {
  if (records === undefined || records === null) return 0;
  if (records instanceof Uint8Array) return records.length;
  let bytes = 0;
  for (const batch of records) bytes += batch.length;
  return bytes;
}

/**
 * Why a fetch's wait is called off (its data came, or max_wait_ms passed): one reason for all, since
 * nothing reads it. abort() without one builds a DOMException with a stack at every fetch that waits.
 */
const WAIT_ENDED = new Error('the fetch wait ended');

/** Waits until a requested partition has data at its fetch offset, or max_wait_ms. */
async function waitForAny(context: BrokerContext, request: FetchRequest, first: FetchResponse): Promise<void> {
  const controller = new AbortController();
  const waits: Promise<void>[] = [];
  request.topics.forEach((topic, t) =>
    topic.partitions.forEach((partition, p) => {
      if (first.responses[t]!.partitions[p]!.errorCode !== ErrorCode.NONE) return;
      waits.push(context.engine.waitForData(topicNameOf(context, topic)!, partition.partition, partition.fetchOffset, controller.signal));
    }),
  );
  const timer = context.clock.setTimer(Math.min(request.maxWaitMs, FETCH_WAIT_MS_MAX), () => controller.abort(WAIT_ENDED));
  await Promise.race([...waits, new Promise<void>((resolve) => controller.signal.addEventListener('abort', () => resolve(), { once: true }))]);
  timer.cancel();
  controller.abort(WAIT_ENDED);
}
