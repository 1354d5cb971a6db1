/** How the simulated clients read Kafka's error codes: what is worth a retry, what means new metadata. */
import { ErrorCode } from '../../broker/protocol/error-codes.ts';

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

/** Group errors that end the member's generation: it must join again. */
const REJOIN = new Set<number>([ErrorCode.REBALANCE_IN_PROGRESS, ErrorCode.UNKNOWN_MEMBER_ID, ErrorCode.ILLEGAL_GENERATION]);

/** Group errors that mean the coordinator moved or is not ready: find it again. */
const COORDINATOR_MOVED = new Set<number>([ErrorCode.NOT_COORDINATOR, ErrorCode.COORDINATOR_NOT_AVAILABLE, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS]);

export function isStaleMetadata(code: number): boolean {
  return STALE_METADATA.has(code);
}

export function isRetriable(code: number): boolean {
  return RETRIABLE.has(code);
}

export function needsRejoin(code: number): boolean {
  return REJOIN.has(code);
}

export function coordinatorMoved(code: number): boolean {
  return COORDINATOR_MOVED.has(code);
}
