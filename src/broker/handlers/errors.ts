import { isFerryError } from '../../errors.ts';
import { isStoreError } from '../../store/errors.ts';
import { isOsError } from '../../util/os-error.ts';
import { ErrorCode, errorCodeFor } from '../../protocol/error-codes.ts';

/**
 * The Kafka error code for whatever a handler caught: Ferry's kinds by the one table; a failure
 * of the operating system (EMFILE, ENOSPC, EIO: an errno-coded error from a system call) or of
 * the object store is KAFKA_STORAGE_ERROR, which clients retry; anything else unknown.
 */
export function errorCodeOf(error: unknown): number {
  if (isFerryError(error)) return errorCodeFor(error.kind);
  if (isOsError(error) || isStoreError(error)) return ErrorCode.KAFKA_STORAGE_ERROR;
  return ErrorCode.UNKNOWN_SERVER_ERROR;
}

/**
 * For a request about a partition this broker does not serve: NOT_LEADER_OR_FOLLOWER when the
 * topic exists (the client refreshes Metadata and goes to the leader), else unknown; null if served.
 */
export function notServedCode(
  context: { engine: { serves(topic: string, partition: number): boolean }; topology: { topics(): ReadonlyMap<string, number> } },
  topic: string,
  partition: number,
): number | null {
  if (context.engine.serves(topic, partition)) return null;
  const partitions = context.topology.topics().get(topic);
  return partitions !== undefined && partition < partitions ? ErrorCode.NOT_LEADER_OR_FOLLOWER : ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
}
