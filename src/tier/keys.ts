import { assert } from '../util/assert.ts';
import { isUuid, type Uuid } from '../util/uuid.ts';

/** Zero-padding keeps one partition's segments in offset order for backends that sort keys. */
const OFFSET_DIGITS = 20;
const TIER_SEGMENT = 'tier';
const SEGMENT_SUFFIX = '.seg';
/** Kafka partitions are non-negative int32s. */
export const PARTITION_MAX = 0x7fff_ffff;
/** Kafka's Uuid text (22 URL-safe base64 characters): safe inside a key segment. */
const UUID_TEXT = '[A-Za-z0-9_-]{21}[AQgw]';
/** `[<prefix>/]tier/<topicId>/<partition>/<base:20>-<end:20>-<uploadId>.seg`, anchored at the end. */
const KEY_PATTERN = new RegExp(`^(?:(.*)/)?${TIER_SEGMENT}/(${UUID_TEXT})/(0|[1-9]\\d{0,9})/(\\d{${OFFSET_DIGITS}})-(\\d{${OFFSET_DIGITS}})-(${UUID_TEXT})\\${SEGMENT_SUFFIX}$`);

/** What a tiered segment's key names (docs/tier-protocol.md, "The tiered segment object"). */
export interface TieredSegmentKey {
  readonly prefix: string;
  readonly topicId: Uuid;
  readonly partition: number;
  readonly baseOffset: number;
  /** Exclusive: the segment holds offsets [baseOffset, endOffset). */
  readonly endOffset: number;
  /** One per upload attempt, so no two attempts ever write the same key. */
  readonly uploadId: Uuid;
}

/** `<prefix>/tier/<topicId>/<partition>/`: every tiered segment of one partition of one topic incarnation. */
export function tieredPartitionPrefix(prefix: string, topicId: Uuid, partition: number): string {
  assert(isUuid(topicId), `topic id ${JSON.stringify(topicId)} is not a UUID`);
  assert(Number.isInteger(partition) && partition >= 0 && partition <= PARTITION_MAX, `partition ${partition}`);
  const root = prefix.replace(/\/+$/, '');
  return `${root === '' ? '' : `${root}/`}${TIER_SEGMENT}/${topicId}/${partition}/`;
}

export function tieredSegmentKey(prefix: string, topicId: Uuid, partition: number, baseOffset: number, endOffset: number, uploadId: Uuid): string {
  assert(Number.isSafeInteger(baseOffset) && baseOffset >= 0 && Number.isSafeInteger(endOffset) && endOffset > baseOffset, `segment offsets [${baseOffset}, ${endOffset})`);
  assert(isUuid(uploadId), `upload id ${JSON.stringify(uploadId)} is not a UUID`);
  const offsets = `${String(baseOffset).padStart(OFFSET_DIGITS, '0')}-${String(endOffset).padStart(OFFSET_DIGITS, '0')}`;
  return `${tieredPartitionPrefix(prefix, topicId, partition)}${offsets}-${uploadId}${SEGMENT_SUFFIX}`;
}

/** The fields of a tiered segment key, or null for any other key (including non-canonical spellings of one). */
export function parseTieredSegmentKey(key: string): TieredSegmentKey | null {
  const match = KEY_PATTERN.exec(key);
  if (match === null) return null;
  const parsed = {
    prefix: match[1] ?? '',
    topicId: match[2]!,
    partition: Number(match[3]),
    baseOffset: Number(match[4]),
    endOffset: Number(match[5]),
    uploadId: match[6]!,
  };
  const valid = parsed.partition <= PARTITION_MAX && Number.isSafeInteger(parsed.endOffset) && parsed.baseOffset < parsed.endOffset;
  // A prefix with trailing slashes would not come back from tieredSegmentKey: only the canonical key counts.
  if (!valid || tieredSegmentKey(parsed.prefix, parsed.topicId, parsed.partition, parsed.baseOffset, parsed.endOffset, parsed.uploadId) !== key) return null;
  return parsed;
}
