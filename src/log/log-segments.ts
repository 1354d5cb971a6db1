/**
 * How a partition's list of segments changes (PartitionLog's roll, retention and truncation): a
 * roll seals the active segment and starts one at the log end; retention and DeleteRecords delete
 * sealed segments from the start; a truncation cuts segments from the end; starting over replaces
 * them all with one empty segment. Each keeps the segments contiguous, oldest first.
 */
import type { Clock } from '../util/clock.ts';
import { regressed } from '../util/regressions.ts';
import { LOCAL_RETENTION_AS_RETENTION, type LogConfig } from './config.ts';
import type { GroupCommit } from './group-commit.ts';
import type { LeaderEpochCache } from './leader-epoch-cache.ts';
import { STORED_BATCH_BYTES_MAX } from './log-append.ts';
import { snapshotProducers } from './log-open.ts';
import type { ProducerStateManager } from './producer-state.ts';
import { scanSegment } from './recovery.ts';
import type { LogSegment } from './segment.ts';

/** Makes the log's next segment, starting at `baseOffset`, in the log's directory. */
export type CreateSegment = (baseOffset: number) => LogSegment;

/** A roll is due before an append of `incomingBytes`: the active segment would pass segment.bytes, or is segment.ms older than the incoming batches. */
export function rollDue(active: LogSegment, incomingBytes: number, incomingMaxTimestamp: number, config: LogConfig): boolean {
  if (active.isEmpty) return false;
  const full = active.sizeBytes + incomingBytes > config.segmentBytes;
  const old = incomingMaxTimestamp - active.firstBatchTimestamp >= config.segmentMs;
  return full || old;
}

/**
 * Seals the active segment and starts a new one at the log end; a no-op when it is empty. A failed
 * roll leaves the active segment active: the next append that needs it rolls again.
 */
export function rollSegment(segments: LogSegment[], commit: GroupCommit, producers: ProducerStateManager, createSegment: CreateSegment): void {
  const active = segments.at(-1)!;
  if (active.isEmpty) return;
  syncOrFail(active, commit); // a sealed segment is always on disk: recovery scans only the active one
  active.writeIndexes();
  segments.push(createSegment(active.nextOffset));
  snapshotProducers(producers);
}

/** A failed sync fails the group commit, and the caller gets its failure. */
function syncOrFail(segment: LogSegment, commit: GroupCommit): void {
  try {
    segment.flushSync();
  } catch (error) {
    commit.fail(error);
    throw commit.failure;
  }
}

/**
 * Deletes the oldest sealed segments beyond retention.bytes or retention.ms; returns how many.
 * With a tier (`tieredEnd` given, docs/tier-protocol.md [D1]), local disk is a cache: only
 * segments wholly below the tiered end go, by local.retention.bytes / local.retention.ms (the
 * tier's own retention is the tierer's, [T7]).
 */
export function deleteBeyondRetention(segments: LogSegment[], config: LogConfig, tieredEnd: number | null, clock: Clock): number {
  const { bytes: retentionBytes, ms: retentionMs } = tieredEnd === null ? { bytes: config.retentionBytes, ms: config.retentionMs } : localRetention(config);
  let totalBytes = segments.reduce((sum, segment) => sum + segment.sizeBytes, 0);
  let deleted = 0;
  while (segments.length > 1) {
    const oldest = segments[0]!;
    if (tieredEnd !== null && segments[1]!.baseOffset > tieredEnd) break; // not wholly tiered yet
    const overSize = retentionBytes >= 0 && (regressed('retention-bytes-off-by-segment') ? totalBytes > retentionBytes : totalBytes - oldest.sizeBytes >= retentionBytes);
    const expired = retentionMs >= 0 && oldest.maxTimestamp < clock.nowMs() - retentionMs;
    if (!overSize && !expired) break;
    segments.shift();
    oldest.delete();
    totalBytes -= oldest.sizeBytes;
    deleted++;
  }
  return deleted;
}

/** What local disk keeps of a tiered log: local.retention.*, or retention.* where those are -2. */
function localRetention(config: LogConfig): { bytes: number; ms: number } {
  return {
    bytes: config.localRetentionBytes === LOCAL_RETENTION_AS_RETENTION ? config.retentionBytes : config.localRetentionBytes,
    ms: config.localRetentionMs === LOCAL_RETENTION_AS_RETENTION ? config.retentionMs : config.localRetentionMs,
  };
}

/** Deletes the sealed segments wholly below `endOffset` (DeleteRecords); returns how many. */
export function deleteSegmentsBelow(segments: LogSegment[], endOffset: number): number {
  let deleted = 0;
  while (segments.length > 1 && segments[1]!.baseOffset <= endOffset) {
    segments.shift()!.delete(); // oldest first: what is left stays contiguous
    deleted++;
  }
  return deleted;
}

/**
 * Cuts every batch at or after `offset` from the end of `segments` (which hold it) and the leader
 * epochs that started there; the active segment is cut by a recovery scan that stops at `offset`.
 */
export function truncateSegments(segments: LogSegment[], offset: number, epochs: LeaderEpochCache): void {
  while (segments.length > 1 && segments.at(-1)!.baseOffset >= offset) segments.pop()!.delete();
  const active = segments.at(-1)!;
  if (active.nextOffset > offset) {
    scanSegment(active, { maxBatchBytes: STORED_BATCH_BYTES_MAX, epochs, learnEpochs: false, endOffset: offset });
  }
  epochs.truncateFromEnd(active.nextOffset);
}

/**
 * Replaces every segment with one empty segment at `offset`, oldest deleted first: a crash part
 * way leaves a suffix of the old log or the empty one. If the old active segment starts at
 * `offset` itself, its files go before the new one's can be made: `filesGone` is told in between.
 */
export function replaceSegments(segments: LogSegment[], offset: number, createSegment: CreateSegment, filesGone: () => void): void {
  while (segments.length > 1) segments.shift()!.delete(); // oldest first: what is left stays contiguous
  const old = segments[0]!;
  if (old.baseOffset === offset) {
    old.delete();
    filesGone();
  }
  const fresh = createSegment(offset);
  if (old.baseOffset !== offset) old.delete();
  segments.splice(0, 1, fresh);
}
