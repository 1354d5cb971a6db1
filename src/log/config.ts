import { FerryError } from '../errors.ts';
import { RECORD_BATCH_HEADER_BYTES } from '../format/record-batch.ts';

/**
 * When appended bytes reach the disk. Kafka's default leaves it to the OS and relies on
 * replication; Ferry's embedded mode has no replica, so it syncs by default.
 * - `per-append`: fdatasync inside every append before it returns (slowest, simplest).
 * - `group`: group commit: one fdatasync covers every append since the last one; it starts once
 *   `bytes` are pending or `ms` after the first pending append. `ms` 0 (the default) syncs as
 *   soon as possible: on the next event-loop turn after an append, so `bytes` never waits.
 * - `none`: never sync explicitly (the OS decides); appends are durable only at roll and close.
 */
export type FlushPolicy =
  | {
      /** fdatasync inside every append. */
      readonly kind: 'per-append';
    }
  | {
      /** Group commit. */
      readonly kind: 'group';
      /** Sync once this many bytes are pending. */
      readonly bytes: number;
      /** ...or this long after the first pending append (0: the next event-loop turn). */
      readonly ms: number;
    }
  | {
      /** Never sync explicitly. */
      readonly kind: 'none';
    };

/** A partition log's settings, by Kafka's topic configs where there is one (docs/topic-configs.md). */
export interface LogConfig {
  /** Roll when the active segment would grow past this (Kafka `segment.bytes`). */
  readonly segmentBytes: number;
  /** Roll when the active segment's first batch is older than this (Kafka `segment.ms`). */
  readonly segmentMs: number;
  /** Delete the oldest segments while the log exceeds this; -1 keeps everything (`retention.bytes`). */
  readonly retentionBytes: number;
  /** Delete segments whose newest record is older than this; -1 keeps everything (`retention.ms`). */
  readonly retentionMs: number;
  /**
   * KIP-405's `local.retention.bytes` / `local.retention.ms`: with a tier, what local disk keeps
   * of segments already tiered (the rest is read from the tier). -2 (the default): the same as
   * retention.bytes / retention.ms; -1 keeps everything tiered locally too.
   */
  readonly localRetentionBytes: number;
  /** See localRetentionBytes. */
  readonly localRetentionMs: number;
  /**
   * KIP-405's `remote.storage.enable`: with a tier, whether this log's rolled segments are copied
   * to it (on by default: stateless brokers need it). Off, the log keeps its whole history on
   * local disk under retention.*, as without a tier, and its WAL objects are never collected.
   */
  readonly remoteStorageEnable: boolean;
  /** Bytes of log between two offset-index entries (`index.interval.bytes`). */
  readonly indexIntervalBytes: number;
  /** Largest batch accepted (Kafka `max.message.bytes`, including the 12-byte log overhead). */
  readonly maxBatchBytes: number;
  /**
   * Kafka's `message.timestamp.type`: CreateTime keeps the producer's timestamps; LogAppendTime
   * has the leader stamp each batch with its clock when it appends (docs/design.md contract 1).
   */
  readonly messageTimestampType: 'CreateTime' | 'LogAppendTime';
  /** When appends are synced to disk (see FlushPolicy); group commit by default. */
  readonly flush: FlushPolicy;
}

/** KIP-405's -2 for local.retention.*: use retention.* instead. */
export const LOCAL_RETENTION_AS_RETENTION = -2;

/** Kafka's own defaults, except the flush policy (see FlushPolicy). */
export const DEFAULT_LOG_CONFIG: LogConfig = {
  segmentBytes: 1024 * 1024 * 1024,
  segmentMs: 7 * 24 * 60 * 60 * 1000,
  retentionBytes: -1,
  retentionMs: 7 * 24 * 60 * 60 * 1000,
  localRetentionBytes: LOCAL_RETENTION_AS_RETENTION,
  localRetentionMs: LOCAL_RETENTION_AS_RETENTION,
  remoteStorageEnable: true,
  indexIntervalBytes: 4096,
  maxBatchBytes: 1024 * 1024 + 12,
  messageTimestampType: 'CreateTime',
  flush: { kind: 'group', bytes: 1024 * 1024, ms: 0 },
};

/** Smallest segment we allow; a batch larger than segmentBytes gets a segment of its own. */
const SEGMENT_BYTES_MIN = 1024;
/** Positions in the offset index are int32, as in Kafka. */
const SEGMENT_BYTES_MAX = 2 ** 31 - 1;

export function resolveLogConfig(overrides: Partial<LogConfig> = {}): LogConfig {
  const config = { ...DEFAULT_LOG_CONFIG, ...overrides };
  requireInteger('segmentBytes', config.segmentBytes, SEGMENT_BYTES_MIN, SEGMENT_BYTES_MAX);
  requireInteger('segmentMs', config.segmentMs, 1, Number.MAX_SAFE_INTEGER);
  requireInteger('retentionBytes', config.retentionBytes, -1, Number.MAX_SAFE_INTEGER);
  requireInteger('retentionMs', config.retentionMs, -1, Number.MAX_SAFE_INTEGER);
  requireInteger('localRetentionBytes', config.localRetentionBytes, LOCAL_RETENTION_AS_RETENTION, Number.MAX_SAFE_INTEGER);
  requireInteger('localRetentionMs', config.localRetentionMs, LOCAL_RETENTION_AS_RETENTION, Number.MAX_SAFE_INTEGER);
  requireInteger('indexIntervalBytes', config.indexIntervalBytes, 0, SEGMENT_BYTES_MAX);
  requireInteger('maxBatchBytes', config.maxBatchBytes, RECORD_BATCH_HEADER_BYTES, SEGMENT_BYTES_MAX);
  if (config.messageTimestampType !== 'CreateTime' && config.messageTimestampType !== 'LogAppendTime')
    throw new FerryError('InvalidArgument', `messageTimestampType must be CreateTime or LogAppendTime, not ${String(config.messageTimestampType)}`);
  if (typeof config.remoteStorageEnable !== 'boolean') throw new FerryError('InvalidArgument', `remoteStorageEnable must be true or false, not ${String(config.remoteStorageEnable)}`);
  requireLocalWithin('localRetentionBytes', config.localRetentionBytes, 'retentionBytes', config.retentionBytes);
  requireLocalWithin('localRetentionMs', config.localRetentionMs, 'retentionMs', config.retentionMs);
  const flush = config.flush;
  if (flush.kind === 'group') {
    requireInteger('flush.bytes', flush.bytes, 0, Number.MAX_SAFE_INTEGER);
    requireInteger('flush.ms', flush.ms, 0, Number.MAX_SAFE_INTEGER);
  } else if (flush.kind !== 'per-append' && flush.kind !== 'none') {
    throw new FerryError('InvalidArgument', `flush.kind must be per-append, group or none, not ${String((flush as { kind: unknown }).kind)}`);
  }
  return config;
}

/** KIP-405: what local disk keeps of tiered segments is at most what the whole log keeps. */
function requireLocalWithin(localName: string, local: number, totalName: string, total: number): void {
  if (local === LOCAL_RETENTION_AS_RETENTION || total === -1) return;
  if (local === -1 || local > total) throw new FerryError('InvalidArgument', `${localName} ${local} keeps more than ${totalName} ${total}: local retention is at most the log's (or -2, the same)`);
}

function requireInteger(name: string, value: number, min: number, max: number): void {
  if (!Number.isSafeInteger(value) || value < min || value > max) {
    throw new FerryError('InvalidArgument', `${name} must be an integer in [${min}, ${max}], got ${value}`);
  }
}
