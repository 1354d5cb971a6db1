import type { RecordBatch } from '../format/record-batch.ts';

/** One record of a batch as the history keeps it: its offset and its value as text ('' for null). */
export interface BatchValue {
  readonly offset: number;
  readonly value: string;
}

/**
 * Distinct batches remembered at most; past it the memo starts over. A run's batches are read
 * many times (each consumer's fetches, every replica's final log, the WAL and tier audits), and a
 * compressed one costs a zlib stream each time: a seed holds a few thousand distinct batches.
 */
const REMEMBERED_BATCHES_MAX = 20_000;

const decoder = new TextDecoder();
/** By the batch's CRC field; each entry's bytes are compared whole (the CRC leaves out the base offset). */
const remembered = new Map<number, { readonly bytes: Buffer; readonly values: readonly BatchValue[] }[]>();
let rememberedCount = 0;

/**
 * The batch's records as offsets and value texts, decoded once per distinct batch (the same bytes
 * always decode to the same records, so a remembered answer is the answer). Throws as
 * `batch.records()` does on a corrupt batch; nothing is remembered then.
 */
export function batchValues(batch: RecordBatch): readonly BatchValue[] {
  const candidates = remembered.get(batch.crc);
  const found = candidates?.find((candidate) => sameBytes(candidate.bytes, batch.bytes));
  if (found !== undefined) return found.values;
  const values: BatchValue[] = [];
  for (const record of batch.records()) values.push({ offset: record.offset, value: record.value === null ? '' : decoder.decode(record.value) });
  if (rememberedCount >= REMEMBERED_BATCHES_MAX) {
    remembered.clear();
    rememberedCount = 0;
  }
  const entry = { bytes: Buffer.from(batch.bytes), values }; // a copy: the caller's buffer may be reused
  if (candidates === undefined || remembered.get(batch.crc) !== candidates) remembered.set(batch.crc, [entry]);
  else candidates.push(entry);
  rememberedCount++;
  return values;
}

function sameBytes(a: Buffer, b: Uint8Array): boolean {
  return a.length === b.length && a.equals(b);
}
