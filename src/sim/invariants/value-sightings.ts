import type { History } from '../history.ts';

/** Where a record value was seen: a read (with the reader), a replica's final log, the tier, or a WAL object. */
export interface Sighting {
  readonly value: string;
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly where: string;
  /** When a read saw it; absent for what the run's end found. */
  readonly atMs?: number;
}

/**
 * Every place the history shows one of `wanted` as data (security invariants: values that must
 * never become data): legitimate reads, every replica's final log, the final tier's segments,
 * and the records the WAL audit found in WAL objects.
 */
export function sightingsOf(history: History, wanted: ReadonlySet<string>): Sighting[] {
  const found: Sighting[] = [];
  if (wanted.size === 0) return found;
  for (const op of history.ops) {
    if (op.kind !== 'fetch') continue;
    for (const record of op.records)
      if (wanted.has(record.value))
        found.push({ value: record.value, topic: op.topic, partition: op.partition, offset: record.offset, where: `read by ${op.client} from node ${op.node}`, atMs: op.endMs });
  }
  for (const log of history.replicaLogs) {
    for (const record of log.records)
      if (wanted.has(record.value)) found.push({ value: record.value, topic: log.topic, partition: log.partition, offset: record.offset, where: `in node ${log.node}'s final log` });
  }
  for (const tier of history.tiered ?? []) {
    for (const segment of tier.segments) {
      for (const record of segment.records)
        if (wanted.has(record.value)) found.push({ value: record.value, topic: tier.topic, partition: tier.partition, offset: record.offset, where: `in tiered segment ${segment.uploadId}` });
    }
  }
  for (const record of history.walRecords ?? [])
    if (wanted.has(record.value)) found.push({ value: record.value, topic: record.topic, partition: record.partition, offset: record.offset, where: 'in a WAL object' });
  return found;
}
