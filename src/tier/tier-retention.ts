import type { LogConfig } from '../log/config.ts';
import { copiedSegments, type TierRecord } from './tier-record.ts';

/**
 * [T7] Where retention moves the partition's log start: past the oldest tiered segments that
 * retention.ms (their newest record is older) or retention.bytes (the whole log, tier and the
 * local bytes above the tier's end, stays at or above it without them) says go, oldest first,
 * stopping at the first that stays. Null when nothing goes. Retention counts the whole log
 * (KIP-405): `localBytesAboveTier` is what the local log holds at or past the tiered end.
 */
export function retainedStart(record: TierRecord, config: Pick<LogConfig, 'retentionBytes' | 'retentionMs'>, localBytesAboveTier: number, nowMs: number): number | null {
  const segments = copiedSegments(record);
  let totalBytes = localBytesAboveTier + segments.reduce((sum, segment) => sum + logBytesOf(segment), 0);
  let start: number | null = null;
  for (const segment of segments) {
    const overSize = config.retentionBytes >= 0 && totalBytes - logBytesOf(segment) >= config.retentionBytes;
    const expired = config.retentionMs >= 0 && segment.maxTimestamp < nowMs - config.retentionMs;
    if (!overSize && !expired) break;
    totalBytes -= logBytesOf(segment);
    start = segment.endOffset;
  }
  return start;
}

/** The record batches' bytes of a tiered segment (what retention.bytes counts, as a local segment's size). */
function logBytesOf(segment: ReturnType<typeof copiedSegments>[number]): number {
  return segment.sections.log?.length ?? segment.bytes;
}
