import { FerryError } from '../errors.ts';
import type { ProducerRecord } from '../format/index.ts';
import { partitionForKey } from './partitioner.ts';

/**
 * Which partition each record of one produce call goes to: the caller's fixed partition, else
 * Kafka's murmur2 for a keyed record, else one sticky partition per call for the keyless ones,
 * rotating across calls. Remembers the rotation per topic.
 */
export class ProduceGrouping {
  readonly #roundRobin = new Map<string, number>();

  /** Record indexes grouped by target partition, in input order within each group. */
  groupByPartition(topic: string, count: number, records: readonly ProducerRecord[], fixed: number | undefined): Map<number, number[]> {
    if (fixed !== undefined && (!Number.isSafeInteger(fixed) || fixed < 0 || fixed >= count)) {
      throw new FerryError('UnknownTopicOrPartition', `partition ${fixed} does not exist: ${topic} has ${count}`);
    }
    const sticky = this.#nextSticky(topic, count);
    const groups = new Map<number, number[]>();
    records.forEach((record, i) => {
      const key = typeof record.key === 'string' ? new TextEncoder().encode(record.key) : record.key;
      const index = fixed ?? (key === null || key === undefined ? sticky : partitionForKey(key, count));
      const group = groups.get(index);
      if (group === undefined) groups.set(index, [i]);
      else group.push(i);
    });
    return groups;
  }

  /** Keyless records share one partition per call, rotating across calls (a sticky partitioner). */
  #nextSticky(topic: string, count: number): number {
    const sticky = (this.#roundRobin.get(topic) ?? 0) % count;
    this.#roundRobin.set(topic, sticky + 1);
    return sticky;
  }
}
