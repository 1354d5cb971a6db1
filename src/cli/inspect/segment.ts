/** A segment file (`<base offset>.log`) read batch by batch: each batch's offsets, counts, timestamps and CRC check. */
import { isFerryError } from '../../errors.ts';
import { LOG_OVERHEAD_BYTES, parseBatchAt, type RecordBatch } from '../../format/index.ts';

/** Largest batch inspect accepts (a batch length is an int32); anything bigger is reported as corrupt. */
const INSPECT_BATCH_BYTES_MAX = 0x7fffffff;

export interface BatchSummary {
  readonly baseOffset: number;
  readonly lastOffset: number;
  readonly records: number;
  readonly bytes: number;
  readonly position: number;
  readonly leaderEpoch: number;
  readonly compression: string;
  readonly firstTimestamp: string;
  readonly maxTimestamp: string;
  readonly producerId: number;
  readonly transactional: boolean;
  readonly control: boolean;
  /** parseBatchAt verified the CRC32C: a batch that fails it ends the scan as `problem`. */
  readonly crc: 'ok';
}

export interface SegmentReport {
  readonly kind: 'segment';
  readonly path: string;
  readonly bytes: number;
  readonly batches: readonly BatchSummary[];
  /** Why the scan stopped before the end (a bad CRC, a torn tail), or null if every byte is a valid batch. */
  readonly problem: string | null;
}

/** Scans `bytes` (a segment's content) from its start; `onBatch` sees each valid batch (to print its records). */
export function scanSegment(path: string, bytes: Uint8Array, onBatch?: (batch: RecordBatch) => void): SegmentReport {
  const batches: BatchSummary[] = [];
  let position = 0;
  // Bounded: each batch advances the position by its size, at least LOG_OVERHEAD_BYTES.
  while (position < bytes.length) {
    let batch: RecordBatch | null;
    try {
      batch = parseBatchAt(bytes, position, INSPECT_BATCH_BYTES_MAX);
    } catch (error) {
      if (!isFerryError(error)) throw error;
      return { kind: 'segment', path, bytes: bytes.length, batches, problem: `INVALID at byte ${position}: ${error.message}` };
    }
    if (batch === null) {
      const problem = `TORN TAIL: ${bytes.length - position} bytes at ${position} are not a whole batch (need at least ${LOG_OVERHEAD_BYTES})`;
      return { kind: 'segment', path, bytes: bytes.length, batches, problem };
    }
    batches.push(summarise(batch, position));
    onBatch?.(batch);
    position += batch.sizeInBytes;
  }
  return { kind: 'segment', path, bytes: bytes.length, batches, problem: null };
}

function summarise(batch: RecordBatch, position: number): BatchSummary {
  return {
    baseOffset: batch.baseOffset,
    lastOffset: batch.lastOffset,
    records: batch.recordCount,
    bytes: batch.sizeInBytes,
    position,
    leaderEpoch: batch.partitionLeaderEpoch,
    compression: batch.compression,
    firstTimestamp: isoTime(batch.baseTimestamp),
    maxTimestamp: isoTime(batch.maxTimestamp),
    producerId: batch.producerId,
    transactional: batch.isTransactional,
    control: batch.isControl,
    crc: 'ok',
  };
}

/** A timestamp as ISO text; Kafka's -1 (none) and values Date cannot show as they are. */
function isoTime(ms: number): string {
  const date = new Date(ms);
  return ms < 0 || Number.isNaN(date.getTime()) ? String(ms) : date.toISOString();
}

export function batchLine(batch: BatchSummary): string {
  const flags = `${batch.transactional ? ' transactional' : ''}${batch.control ? ' control' : ''}`;
  return `offsets ${batch.baseOffset}..${batch.lastOffset} records=${batch.records} bytes=${batch.bytes} position=${batch.position} epoch=${batch.leaderEpoch} compression=${batch.compression} timestamps=${batch.firstTimestamp}..${batch.maxTimestamp}${batch.producerId >= 0 ? ` producerId=${batch.producerId}` : ''}${flags} crc=${batch.crc}`;
}

export function segmentLines(report: SegmentReport): string[] {
  const lines = [`segment ${report.path}: ${report.bytes} bytes`, ...report.batches.map((batch) => `  ${batchLine(batch)}`)];
  lines.push(report.problem === null ? `  ${report.batches.length} batches, all valid` : `  ${report.problem}`);
  return lines;
}
