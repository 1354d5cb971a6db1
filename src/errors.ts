/**
 * Ferry's public error kinds. Every failure a caller can cause or observe is a FerryError with
 * one of these kinds; the broker maps kinds to Kafka error codes in one place. Programmer errors
 * (broken invariants) are AssertionErrors from util/assert.ts instead, and are never caught.
 */
export type FerryErrorKind =
  | 'InvalidArgument' // the caller passed something malformed (names, counts, options)
  | 'InvalidConfig' // a topic config name Ferry does not know, or a value Kafka's rules (or Ferry's limits) reject
  | 'CorruptRecord' // bytes failed validation: CRC, magic, lengths
  | 'CorruptObject' // a stored object (WAL object, tiered segment) failed validation: checksums, magic, framing
  | 'RecordTooLarge' // a batch larger than the configured maximum
  | 'UnknownTopicOrPartition'
  | 'TopicAlreadyExists'
  | 'InvalidPartitions' // a partition count a topic cannot take: not an increase, or past the maximum (Kafka's INVALID_PARTITIONS)
  | 'OffsetOutOfRange'
  | 'InvalidOffsets' // a replica append that leaves a gap or overlaps the log
  | 'Closed' // the engine or log was closed
  | 'Fenced' // a successor sealed this writer's WAL stream; it acknowledges nothing more
  | 'NotLeader' // a write to a partition this engine only follows
  | 'FencedLeaderEpoch' // the caller's leader epoch is older than the partition's (KIP-320): it refreshes its metadata
  | 'UnknownLeaderEpoch' // the caller's leader epoch is newer than this broker knows (KIP-320): it retries
  | 'Locked' // another process holds the log directory
  | 'OutOfOrderSequence' // an idempotent producer's batch does not follow its last sequence
  | 'InvalidProducerEpoch' // an idempotent producer's epoch is older than the one the log holds
  | 'InvalidTimestamp' // a batch timestamp further ahead of the leader's clock than Kafka allows
  | 'Storage' // the filesystem failed underneath us
  | 'NotCoordinator' // another broker claimed the consumer group: this one writes nothing more for it
  | 'StaleMember' // a consumer group member's request of a generation it is no longer in
  | 'OutcomeUnknown'; // a change whose store write failed partway or timed out: it may have taken effect (it completes, or a retry finds out)

/** Every error Ferry's engine reports: `kind` says what went wrong, as Kafka's error codes do. */
export class FerryError extends Error {
  /** What went wrong (see FerryErrorKind). */
  readonly kind: FerryErrorKind;

  constructor(kind: FerryErrorKind, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.kind = kind;
    this.name = `FerryError(${kind})`;
  }
}

/** A record batch that failed validation. `field` names what was wrong, `position` where it starts. */
export class CorruptRecordError extends FerryError {
  readonly field: string;
  readonly position: number;

  constructor(field: string, position: number, detail: string) {
    super('CorruptRecord', `corrupt record batch at byte ${position}: ${field}: ${detail}`);
    this.field = field;
    this.position = position;
  }
}

/**
 * A stored object (a WAL object, a tiered segment) that failed validation: `field` names the
 * check, `position` its byte in the object (or in the part `objectName` names).
 */
export class CorruptObjectError extends FerryError {
  readonly field: string;
  readonly position: number;

  constructor(field: string, position: number, detail: string, objectName = 'WAL object') {
    super('CorruptObject', `corrupt ${objectName} at byte ${position}: ${field}: ${detail}`);
    this.field = field;
    this.position = position;
  }
}

/** Whether `error` is a FerryError, of `kind` when given. */
export function isFerryError(error: unknown, kind?: FerryErrorKind): error is FerryError {
  return error instanceof FerryError && (kind === undefined || error.kind === kind);
}
