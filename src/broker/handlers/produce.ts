import { ATTRIBUTES_OFFSET, BATCH_LENGTH_OFFSET, LOG_OVERHEAD_BYTES, RECORD_BATCH_HEADER_BYTES, TRANSACTIONAL_FLAG_MASK } from '../../format/record-batch.ts';
import { AclOperation, ResourceType } from '../../security/acl/model.ts';
import type { PartitionProduceData, PartitionProduceResponse, ProduceRequest, ProduceResponse } from '../apis/produce.ts';
import { type BrokerContext, NO_TIMESTAMP } from '../context.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { errorCodeOf, notServedCode } from './errors.ts';
import type { Session } from '../../security/session.ts';
import { allowed, allowedNames, LOCAL_SESSION } from './authorize.ts';

/**
 * [K5] The longest a produce waits for a takeover under way here: past it, NOT_LEADER_OR_FOLLOWER
 * sends the client to its metadata again (a takeover that slow may be failing; another broker
 * may lead by now). A tail of TIER_TAIL_MAX_BYTES rebuilds in well under this.
 */
export const ADOPTION_WAIT_MAX_MS = 5_000;

const ACKS = new Map<number, 0 | 1 | 'all'>([
  [0, 0],
  [1, 1],
  [-1, 'all'],
]);

/**
 * Appends each partition's batches; acks=0 gets no response at all, as Kafka does. Authorized as
 * Kafka's KafkaApis.handleProduceRequest: transactional batches need WRITE on the request's
 * transactional id (else TRANSACTIONAL_ID_AUTHORIZATION_FAILED for every partition, nothing
 * appended); each topic needs WRITE (else TOPIC_AUTHORIZATION_FAILED, checked before the topic's
 * existence, so that a client may not learn which topics exist). Kafka 4.1 checks no
 * IDEMPOTENT_WRITE here: an idempotent producer was authorized by its InitProducerId.
 */
export async function handleProduce(context: BrokerContext, request: ProduceRequest, session: Session = LOCAL_SESSION): Promise<ProduceResponse | null> {
  const acks = ACKS.get(request.acks);
  if (hasTransactionalRecords(request) && (request.transactionalId === null || !allowed(context, session, AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactionalId))) {
    return answered(acks, everyPartitionFailed(request, ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED));
  }
  const writable = allowedNames(
    context,
    session,
    AclOperation.WRITE,
    ResourceType.TOPIC,
    request.topicData.map((topic) => topic.name),
  );
  const responses = await Promise.all(
    request.topicData.map(async (topic) => ({
      name: topic.name,
      partitionResponses: await Promise.all(
        topic.partitionData.map((data) => {
          if (!writable.has(topic.name)) return failed(data.index, ErrorCode.TOPIC_AUTHORIZATION_FAILED);
          return acks === undefined ? failed(data.index, ErrorCode.INVALID_REQUIRED_ACKS) : producePartition(context, topic.name, data, acks, request.timeoutMs);
        }),
      ),
    })),
  );
  return answered(acks, { responses, throttleTimeMs: 0 });
}

/**
 * An acks=0 produce gets no answer; one that failed anywhere closes the connection instead, as
 * Kafka's handleProduceRequest does, so that the producer learns something went wrong (it
 * refreshes its metadata and reconnects) rather than writing on into nothing.
 */
function answered(acks: 0 | 1 | 'all' | undefined, response: ProduceResponse): ProduceResponse | null {
  if (acks !== 0) return response;
  const failures = response.responses.flatMap((topic) =>
    topic.partitionResponses.filter((partition) => partition.errorCode !== ErrorCode.NONE).map((partition) => `${topic.name}-${partition.index}: error ${partition.errorCode}`),
  );
  if (failures.length > 0) throw new Error(`an acks=0 produce failed (${failures.join(', ')}): the connection closes, as Kafka closes it`);
  return null;
}

/** Kafka's RequestUtils.hasTransactionalRecords: the first batch of some partition is transactional. */
function hasTransactionalRecords(request: ProduceRequest): boolean {
  return request.topicData.some((topic) =>
    topic.partitionData.some(({ records }) => {
      if (records === null || records.length < RECORD_BATCH_HEADER_BYTES) return false;
      const attributes = (records[ATTRIBUTES_OFFSET]! << 8) | records[ATTRIBUTES_OFFSET + 1]!;
      return (attributes & TRANSACTIONAL_FLAG_MASK) !== 0;
    }),
  );
}

function everyPartitionFailed(request: ProduceRequest, errorCode: number): ProduceResponse {
  return { responses: request.topicData.map((topic) => ({ name: topic.name, partitionResponses: topic.partitionData.map((data) => failed(data.index, errorCode)) })), throttleTimeMs: 0 };
}

async function producePartition(context: BrokerContext, topic: string, data: PartitionProduceData, acks: 0 | 1 | 'all', timeoutMs: number): Promise<PartitionProduceResponse> {
  const records = data.records;
  if (records === null || records.length < RECORD_BATCH_HEADER_BYTES) return failed(data.index, ErrorCode.CORRUPT_MESSAGE);
  if (holdsSecondBatch(records)) return { ...failed(data.index, ErrorCode.INVALID_RECORD), errorMessage: SECOND_BATCH_REFUSED };
  // The request's timeout bounds the whole wait: for a takeover under way here to end, for room in
  // the WAL's upload buffer (a store outage holds it full), then for the acknowledgement. A wait
  // given up before the append appends nothing.
  const deadline = new AbortController();
  const timer = context.clock.setTimer(Math.max(0, timeoutMs), () => deadline.abort(new Error(`produce request timed out after ${timeoutMs} ms`)));
  try {
    const notServed = await notServedAfterAdoption(context, topic, data.index, deadline.signal);
    if (notServed !== null) return failed(data.index, notServed);
    // Idempotent producers' sequences are checked by the partition's log, in the append itself:
    // a retry of a batch it holds comes back with the original's offset and durability.
    const appended = await context.engine.appendBatches(topic, data.index, records, deadline.signal);
    if (
      acks === 'all' &&
      (await untilAborted(
        appended.committed.then(() => true),
        deadline.signal,
      )) === null
    )
      return failed(data.index, ErrorCode.REQUEST_TIMED_OUT);
    return succeeded(data.index, appended.baseOffset, appended.logStartOffset, appended.logAppendTimeMs);
  } catch (error) {
    return failed(data.index, error === deadline.signal.reason ? ErrorCode.REQUEST_TIMED_OUT : errorCodeOf(error));
  } finally {
    timer.cancel();
  }
}

/**
 * notServedCode, after any takeover of the partition under way here ended (docs/tier-protocol.md
 * [K5]): a produce that reaches a new leader while it rebuilds the tail is answered once it serves,
 * rather than sent off with NOT_LEADER_OR_FOLLOWER to back off and ask again (kafkajs waits up to
 * its retry interval, 100s of ms, each time). A wait that outlasts the request answers its timeout.
 */
async function notServedAfterAdoption(context: BrokerContext, topic: string, partition: number, signal: AbortSignal): Promise<number | null> {
  const adoption = context.engine.serves(topic, partition) ? null : context.topology.adoptionOf(topic, partition);
  if (adoption !== null) {
    const waited = new AbortController();
    const timer = context.clock.setTimer(ADOPTION_WAIT_MAX_MS, () => waited.abort());
    try {
      await untilAborted(adoption, AbortSignal.any([signal, waited.signal]));
    } finally {
      timer.cancel();
    }
    if (signal.aborted) return ErrorCode.REQUEST_TIMED_OUT;
  }
  return notServedCode(context, topic, partition);
}

/** Resolves with the result, or null once `signal` aborts (the records may still commit later). */
function untilAborted<T>(promise: Promise<T>, signal: AbortSignal): Promise<T | null> {
  if (signal.aborted) return Promise.resolve(null);
  const aborted = new Promise<null>((resolve) => signal.addEventListener('abort', () => resolve(null), { once: true }));
  return Promise.race([promise, aborted]);
}

/** Kafka's ProduceRequest.validateRecords, for every version Ferry serves (v3+). */
const SECOND_BATCH_REFUSED = 'Produce requests with version 3 and later are only allowed to contain exactly one record batch per partition';

/**
 * Whether a whole second batch follows the first (Kafka's validateRecords: its batch iterator
 * finds one more). Bytes too few for one are not a second batch here: the append judges them
 * (CORRUPT_MESSAGE, stricter than Kafka, whose log trims such a tail).
 */
function holdsSecondBatch(records: Uint8Array): boolean {
  const view = new DataView(records.buffer, records.byteOffset, records.byteLength);
  const second = LOG_OVERHEAD_BYTES + view.getInt32(BATCH_LENGTH_OFFSET);
  if (second < RECORD_BATCH_HEADER_BYTES || records.length - second < RECORD_BATCH_HEADER_BYTES) return false;
  const secondBytes = LOG_OVERHEAD_BYTES + view.getInt32(second + BATCH_LENGTH_OFFSET);
  return secondBytes >= RECORD_BATCH_HEADER_BYTES && records.length - second >= secondBytes;
}

/** KIP-896: Produce v0-v2 carry message formats 0 and 1, which Kafka 4 and Ferry no longer take. */
const OLD_FORMAT_REFUSED = 'Produce v0-v2 (message formats 0 and 1) are not supported: use a client that sends record batches (Produce v3+, Kafka 0.11+)';

/** The answer to a Produce in a version Kafka 4 removed: UNSUPPORTED_VERSION for every partition, nothing appended. */
export function refuseOldProduce(request: ProduceRequest): ProduceResponse {
  return {
    responses: request.topicData.map((topic) => ({
      name: topic.name,
      partitionResponses: topic.partitionData.map((data) => ({ ...failed(data.index, ErrorCode.UNSUPPORTED_VERSION), errorMessage: OLD_FORMAT_REFUSED })),
    })),
    throttleTimeMs: 0,
  };
}

function succeeded(index: number, baseOffset: number, logStartOffset: number, logAppendTimeMs: number): PartitionProduceResponse {
  return { index, errorCode: ErrorCode.NONE, baseOffset, logAppendTimeMs, logStartOffset, recordErrors: [], errorMessage: null };
}

function failed(index: number, errorCode: number): PartitionProduceResponse {
  return { index, errorCode, baseOffset: -1, logAppendTimeMs: NO_TIMESTAMP, logStartOffset: -1, recordErrors: [], errorMessage: null };
}
