import { concatBytes } from '../../src/util/bytes.ts';
import { buildRecordBatch, type ProducerRecord } from '../../src/format/batch-builder.ts';

/** A batch of `count` records whose values say where they came from: `${tag}-${i}`. */
export function batchOf(tag: string, count = 1, timestampMs = 1_700_000_000_000, valueBytes = 0): Uint8Array {
  const records: ProducerRecord[] = [];
  for (let i = 0; i < count; i++) {
    records.push({ key: `key-${i}`, value: `${tag}-${i}${'x'.repeat(valueBytes)}`, timestamp: timestampMs });
  }
  return buildRecordBatch(records, { nowMs: timestampMs });
}

export function concat(...parts: Uint8Array[]): Uint8Array {
  return concatBytes(parts);
}

export function decode(bytes: Uint8Array | null): string | null {
  return bytes === null ? null : new TextDecoder().decode(bytes);
}
