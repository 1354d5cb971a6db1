/** The records of a Fetch answer's partition as the history wants them: offset and value, from the fetch offset on. */
import { parseBatchAt } from '../../format/batch-parse.ts';
import type { ReadRecord } from '../history.ts';
import { batchValues } from '../batch-values.ts';

/** Batches above this are a broken answer, not data the simulation wrote. */
const FETCHED_BATCH_BYTES_MAX = 64 * 1024 * 1024;

export interface FetchedRecords {
  readonly records: ReadRecord[];
  /** The offset after the last whole batch (control batches included), or the fetch offset if none was whole. */
  readonly nextOffset: number;
}

/**
 * Parses whole batches (a last one cut short by the size limit is left for the next fetch) and
 * keeps records at or after `fetchOffset` (a batch may start before it). Throws on a corrupt batch.
 */
export function fetchedRecords(chunks: readonly Uint8Array[] | null, fetchOffset: number): FetchedRecords {
  const records: ReadRecord[] = [];
  let nextOffset = fetchOffset;
  for (const bytes of chunks ?? []) {
    let position = 0;
    for (;;) {
      const batch = parseBatchAt(bytes, position, FETCHED_BATCH_BYTES_MAX);
      if (batch === null) break;
      position += batch.sizeInBytes;
      nextOffset = Math.max(nextOffset, batch.nextOffset);
      if (batch.isControl) continue;
      const stamped = batch.timestampType === 'LogAppendTime' ? { logAppendTime: true as const } : {};
      for (const { offset, value } of batchValues(batch)) if (offset >= fetchOffset) records.push({ offset, value, ...stamped });
    }
  }
  return { records, nextOffset };
}
