import { FerryError } from '../errors.ts';
import { buildRecordBatch, type ProducerRecord } from '../format/index.ts';
import type { Clock } from '../util/clock.ts';
import type { AppendedBatches, ProducedRecord, ProduceOptions } from './engine-options.ts';
import { localStartFor } from './partition-reads.ts';
import type { Partition } from '../partition/partition.ts';
import { type PartitionTable, unknownTopic } from './partition-table.ts';
import { ProduceGrouping } from './produce-grouping.ts';
import type { TopicAdmin } from './topic-admin.ts';

/**
 * Appends to the partitions served here: the embedded API's records (grouped by partition, one
 * batch each) and a Kafka client's whole batches (the broker's Produce), each resolving once in
 * the local log, with the promise that it is durable (what acks=all waits for). A topic produced
 * to before it exists is created first when EngineOptions.autoCreateTopics says so.
 */
export class ProducePath {
  readonly #table: PartitionTable;
  readonly #topics: TopicAdmin;
  readonly #clock: Clock;
  readonly #autoCreateTopics: boolean;
  readonly #checkOpen: () => void;
  readonly #grouping = new ProduceGrouping();

  constructor(table: PartitionTable, topics: TopicAdmin, clock: Clock, autoCreateTopics: boolean, checkOpen: () => void) {
    this.#table = table;
    this.#topics = topics;
    this.#clock = clock;
    this.#autoCreateTopics = autoCreateTopics;
    this.#checkOpen = checkOpen;
  }

  /**
   * Appends records and resolves with each one's partition and offset, in input order. Records
   * for one partition go in one batch; with acks 'all' the promise waits until it is durable.
   */
  async produce(topic: string, records: readonly ProducerRecord[], options: ProduceOptions = {}): Promise<ProducedRecord[]> {
    this.#checkOpen();
    if (records.length === 0) throw new FerryError('InvalidArgument', 'produce needs at least one record');
    const partitions = this.#partitionsFor(topic);
    const groups = this.#grouping.groupByPartition(topic, partitions.length, records, options.partition);
    const results: ProducedRecord[] = new Array(records.length);
    const durables: Promise<void>[] = [];
    for (const [index, members] of groups) {
      const batch = buildRecordBatch(
        members.map((m) => records[m]!),
        { nowMs: this.#clock.nowMs(), compression: options.compression ?? 'none' },
      );
      const target = partitions[index];
      if (target === undefined) throw new FerryError('UnknownTopicOrPartition', `${topic}-${index} is not served here`);
      const { baseOffset, durable } = await target.append(batch);
      members.forEach((member, i) => (results[member] = { partition: index, offset: baseOffset + i }));
      durables.push(durable);
    }
    if ((options.acks ?? 'all') === 'all') await Promise.all(durables);
    // With acks 1 nobody awaits these; a failure shows in the next produce and in `wal.failure`.
    else for (const durable of durables) durable.catch(() => {});
    return results;
  }
  /**
   * Appends whole record batches as a Kafka client sent them (the broker's Produce path): they
   * are validated (magic 2, CRC32C, sizes), get their offsets in place, and travel on to the WAL
   * as views of `records`. Resolves once they are in the local log, with `committed`, which
   * resolves once the high watermark passed them (what acks=all waits for). `signal` gives up
   * waiting for room in the WAL's upload buffer (the request timed out): nothing is appended then.
   */
  async appendBatches(topic: string, partition: number, records: Uint8Array, signal?: AbortSignal): Promise<AppendedBatches> {
    const target = this.#partitionsFor(topic)[partition];
    if (target === undefined) throw new FerryError('UnknownTopicOrPartition', `partition ${partition} does not exist in ${topic}`);
    const { baseOffset, lastOffset, logAppendTimeMs, durable } = await target.append(records, signal);
    durable.catch(() => {}); // when nobody awaits it (acks 0 or 1), a failure surfaces in later produces and in `wal.failure`
    return { baseOffset, lastOffset, logStartOffset: localStartFor(target), logAppendTimeMs, committed: durable };
  }

  /** The partitions of `topic`, created first when auto-creation is on (not while a delete of the name is under way). */
  #partitionsFor(topic: string): Partition[] {
    const existing = this.#table.get(topic);
    if (existing !== undefined) return existing;
    if (!this.#autoCreateTopics || this.#topics.deletions.has(topic)) throw unknownTopic(topic);
    this.#topics.createTopic(topic);
    return this.#table.get(topic)!;
  }
}
