/** How the simulated clients read Kafka's error codes: what is worth a retry, what means new metadata. */
import { ErrorCode } from '../../protocol/error-codes.ts';

/** Errors after which the partition's leader must be asked again. */
const STALE_METADATA = new Set<number>([
  ErrorCode.NOT_LEADER_OR_FOLLOWER,
  ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
  ErrorCode.LEADER_NOT_AVAILABLE,
  ErrorCode.FENCED_LEADER_EPOCH,
  ErrorCode.UNKNOWN_LEADER_EPOCH,
  ErrorCode.KAFKA_STORAGE_ERROR,
]);

/** Errors a request may simply be sent again after (Kafka's RetriableException subclasses). */
const RETRIABLE = new Set<number>([
  ...STALE_METADATA,
  ErrorCode.REQUEST_TIMED_OUT,
  ErrorCode.NOT_ENOUGH_REPLICAS,
  ErrorCode.NOT_ENOUGH_REPLICAS_AFTER_APPEND,
  ErrorCode.CORRUPT_MESSAGE,
  ErrorCode.UNKNOWN_SERVER_ERROR,
]);

/**
 * What a group member does on a coordinator's answer, as Kafka's Java consumer does
 * (AbstractCoordinator, ConsumerCoordinator) and librdkafka alike:
 * - `rejoin`: the generation ended (REBALANCE_IN_PROGRESS, ILLEGAL_GENERATION): join again under
 *   the same member id;
 * - `rejoin-as-new`: the coordinator no longer knows the member (UNKNOWN_MEMBER_ID; FENCED_INSTANCE_ID,
 *   fatal to a static member, never sent by these members): join again as a new member;
 * - `find-coordinator`: it is not the coordinator, or not available, or timed out (NOT_COORDINATOR,
 *   COORDINATOR_NOT_AVAILABLE, REQUEST_TIMED_OUT): find it again, keeping the generation, which
 *   may live on there;
 * - `retry`: anything else (COORDINATOR_LOAD_IN_PROGRESS, a storage error, a refused topic): the
 *   same coordinator later; the generation stands.
 */
export type GroupReaction = 'none' | 'rejoin' | 'rejoin-as-new' | 'find-coordinator' | 'retry';

/** Kafka's FENCED_INSTANCE_ID (Errors.java), which Ferry never answers: it has no static members. */
const FENCED_INSTANCE_ID = 82;

const GROUP_REACTIONS = new Map<number, GroupReaction>([
  [ErrorCode.NONE, 'none'],
  [ErrorCode.REBALANCE_IN_PROGRESS, 'rejoin'],
  [ErrorCode.ILLEGAL_GENERATION, 'rejoin'],
  [ErrorCode.UNKNOWN_MEMBER_ID, 'rejoin-as-new'],
  [FENCED_INSTANCE_ID, 'rejoin-as-new'],
  [ErrorCode.NOT_COORDINATOR, 'find-coordinator'],
  [ErrorCode.COORDINATOR_NOT_AVAILABLE, 'find-coordinator'],
  [ErrorCode.REQUEST_TIMED_OUT, 'find-coordinator'],
]);

export function isStaleMetadata(code: number): boolean {
  return STALE_METADATA.has(code);
}

export function isRetriable(code: number): boolean {
  return RETRIABLE.has(code);
}

export function groupReaction(code: number): GroupReaction {
  return GROUP_REACTIONS.get(code) ?? 'retry';
}
