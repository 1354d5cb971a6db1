import { FerryError } from '../errors.ts';
import type { RemoteReader } from '../tier/remote-reader.ts';
import { regressed } from '../util/regressions.ts';
import type { ConsumedRecord, ConsumeOptions, FetchOptions, FetchResult, OffsetLookup } from './engine-options.ts';
import type { Partition } from '../partition/partition.ts';
import type { PartitionTable } from './partition-table.ts';

/** Kafka's fetch.max.bytes default for one fetch when the caller names none. */
export const FETCH_BYTES_DEFAULT = 1024 * 1024;
/** ListOffsets' special timestamps. */
const LATEST_TIMESTAMP = -1;
const EARLIEST_TIMESTAMP = -2;
/** KIP-734: the record with the largest timestamp. */
const MAX_TIMESTAMP = -3;
/** KIP-405: the local log's start (the tier's start is EARLIEST). */
const EARLIEST_LOCAL_TIMESTAMP = -4;
/** KIP-1005: the last offset copied to the tier; -1 while none is. */
const LATEST_TIERED_TIMESTAMP = -5;

/**
 * The reads an engine answers from the partitions it serves: fetches from the local log and, below
 * its start, from the tier [D2]; ListOffsets [D3]; and the log start a reader sees (LS). Each
 * read as a leader passes the partition's leadership check; a read that waited on the tier checks
 * again that the partition is still served as it was (contract 10, L5).
 */
export class PartitionReads {
  readonly #table: PartitionTable;
  /** With a tier store: serves offsets below the local log start from it [D2]. */
  readonly #remote: RemoteReader | null;

  constructor(table: PartitionTable, remote: RemoteReader | null) {
    this.#table = table;
    this.#remote = remote;
  }

  /** Yields records from `fromOffset` on (the tier's too), waiting for new ones at the end, until `signal` aborts or the engine closes. */
  async *consume(topic: string, options: ConsumeOptions, closed: () => boolean): AsyncGenerator<ConsumedRecord> {
    const partitionIndex = options.partition ?? 0;
    const target = this.#table.partition(topic, partitionIndex);
    let offset = options.fromOffset ?? localStartFor(target);
    while (!closed() && !options.signal?.aborted) {
      if (offset >= target.highWatermark) {
        await target.waitForData(offset, options.signal);
        continue;
      }
      const { batches } = await this.fetchWithTier(topic, partitionIndex, offset, { maxBytes: options.maxBytes ?? FETCH_BYTES_DEFAULT });
      for (const batch of batches) {
        for (const record of batch.records()) {
          if (record.offset < offset) continue; // the first batch may start before the offset asked for
          yield { ...record, topic, partition: partitionIndex };
          offset = record.offset + 1;
        }
        offset = Math.max(offset, batch.nextOffset);
      }
    }
  }

  /**
   * Reads whole batches from `offset` up to the high watermark. `maxBytes` 0 reads nothing and
   * only answers the partition's state (a fetch whose response is already full).
   */
  fetch(topic: string, partition: number, offset: number, options: FetchOptions = {}): FetchResult {
    const target = this.#table.partition(topic, partition);
    target.checkServesAsLeader();
    return this.#readLocal(target, topic, partition, offset, options);
  }
  /**
   * fetch() without the leadership gate: what this engine's local log holds from `offset` below its
   * high watermark, whatever its lease says. For audits of what a broker stores (the simulation's
   * final logs), never for answers to clients, which the gate guards (docs/cluster-protocol.md L5).
   */
  readStored(topic: string, partition: number, offset: number, options: FetchOptions = {}): FetchResult {
    return this.#readLocal(this.#table.partition(topic, partition), topic, partition, offset, options);
  }
  #readLocal(target: Partition, topic: string, partition: number, offset: number, options: FetchOptions): FetchResult {
    target.checkReadable(offset);
    checkNotDeleted(target, offset);
    const highWatermark = target.highWatermark;
    const maxBytes = options.maxBytes ?? FETCH_BYTES_DEFAULT;
    if (maxBytes === 0) {
      if (offset < target.log.logStartOffset) throw new FerryError('OffsetOutOfRange', `offset ${offset} is before the log start ${target.log.logStartOffset} of ${topic}-${partition}`);
      return { batches: [], highWatermark, logStartOffset: this.logStartOffsetOf(target) };
    }
    const { batches } = target.log.read(offset, maxBytes, options.allocate);
    // Regression: a read from the last offset below the high watermark was taken for one at it, whose batches need no cut.
    if (regressed('fetch-past-high-watermark') && offset + 1 === highWatermark) return { batches, highWatermark, logStartOffset: this.logStartOffsetOf(target) };
    return { batches: batches.filter((batch) => batch.baseOffset < highWatermark), highWatermark, logStartOffset: this.logStartOffsetOf(target) };
  }
  /**
   * LS (docs/tier-protocol.md): the tier's start once it holds copied segments, else the local
   * log's. A local read answers at once, so the tier's start is the one last read (refreshed in
   * the background); until a first read lands, the local start.
   */
  logStartOffsetOf(target: Partition): number {
    const local = target.log.logStartOffset;
    const tierStart = this.#remote?.peekLogStartOffset(target.topicId, target.index) ?? null;
    return Math.max(target.log.deletedBeforeOffset, tierStart === null ? local : Math.min(tierStart, local)); // DeleteRecords' start hides what either still holds
  }
  /**
   * Kafka's log start offset of a partition served here, as its reads see it (LS): DeleteRecords'
   * start, or the tier's or the local log's where those start later. What a follower reports, for
   * its leader's DeleteRecords to wait on [R6].
   */
  logStartOffset(topic: string, partition: number): number {
    return this.logStartOffsetOf(this.#table.partition(topic, partition));
  }
  /**
   * The log start DeleteRecords moved a partition served here to (0 before any): what a leader's
   * answers to its followers' reports carry [R6]. Not the start retention moved: a follower's own
   * log and the tier keep what retention took from the leader's disk, as a rebuild would.
   */
  deletedBeforeOffset(topic: string, partition: number): number {
    return this.#table.partition(topic, partition).log.deletedBeforeOffset;
  }
  /** The first offset the local log holds (below it, only the tier may: fetchWithTier). */
  localLogStartOffset(topic: string, partition: number): number {
    return this.#table.partition(topic, partition).log.logStartOffset;
  }
  /**
   * fetch(), and below the local log start from the tier (docs/tier-protocol.md [D2]): the whole
   * batches from the one holding `offset`, up to the end of its tiered segment, below the high
   * watermark. OffsetOutOfRange when neither the local log nor the tier holds `offset`.
   */
  async fetchWithTier(topic: string, partition: number, offset: number, options: FetchOptions = {}): Promise<FetchResult> {
    const target = this.#table.partition(topic, partition);
    if (this.#remote === null || offset >= target.log.logStartOffset) return this.fetch(topic, partition, offset, options);
    target.checkServesAsLeader();
    checkNotDeleted(target, offset); // the tier still holds what DeleteRecords deleted until its retention passes it
    const { batches, logStartOffset } = await this.#remote.read(target.topicId, partition, offset, options.maxBytes ?? FETCH_BYTES_DEFAULT);
    this.#checkStillServed(topic, partition, target);
    const highWatermark = target.highWatermark;
    return { batches: batches.filter((batch) => batch.baseOffset < highWatermark), highWatermark, logStartOffset: Math.max(logStartOffset, target.log.deletedBeforeOffset) };
  }
  /** offsetFor(), counting the tier [D3]: the earliest offset is the tier's start, and a timestamp below the local log is looked up in the tier. */
  async offsetForWithTier(topic: string, partition: number, timestamp: number): Promise<OffsetLookup> {
    this.#table.partition(topic, partition).checkServesAsLeader();
    const local = this.offsetFor(topic, partition, timestamp);
    if (this.#remote === null || timestamp === LATEST_TIMESTAMP || timestamp === MAX_TIMESTAMP || timestamp === EARLIEST_LOCAL_TIMESTAMP) return local;
    const target = this.#table.partition(topic, partition);
    if (timestamp === LATEST_TIERED_TIMESTAMP) {
      const end = await this.#remote.tieredEndOffset(target.topicId, partition);
      this.#checkStillServed(topic, partition, target);
      return end === null ? local : { offset: end - 1, timestamp: -1, leaderEpoch: target.epochAt(end - 1) };
    }
    if (timestamp === EARLIEST_TIMESTAMP) {
      const tierStart = await this.#remote.logStartOffset(target.topicId, partition);
      this.#checkStillServed(topic, partition, target);
      // The tier's start counts only at or above DeleteRecords' (local.offset is never below that).
      const start = tierStart === null ? local.offset : Math.max(target.log.deletedBeforeOffset, Math.min(tierStart, local.offset));
      return start === local.offset ? local : { offset: start, timestamp: -1, leaderEpoch: -1 };
    }
    const tiered = await this.#remote.offsetForTimestamp(target.topicId, partition, timestamp, target.log.deletedBeforeOffset);
    this.#checkStillServed(topic, partition, target);
    return tiered === null ? local : { offset: tiered.offset, timestamp: tiered.timestamp, leaderEpoch: -1 };
  }
  /**
   * After a read of the tier (I/O): the partition may have been deleted and created again
   * meanwhile, and the answer is its old incarnation's (docs/design.md contract 10); a leader's lease may have
   * lapsed meanwhile (L5).
   */
  #checkStillServed(topic: string, partition: number, target: Partition): void {
    if (this.#table.get(topic)?.[partition] !== target) throw new FerryError('NotLeader', `${topic}-${partition} changed while its tier was read; ask again`);
    target.checkServesAsLeader();
  }
  /**
   * ListOffsets on the local log: for a timestamp, the first record at or after it; for Kafka's
   * special timestamps (-1 latest, -2 earliest, -3 max timestamp, -4 earliest local, -5 latest
   * tiered), what each names. offsetForWithTier also looks in the tier.
   */
  offsetFor(topic: string, partition: number, timestamp: number): OffsetLookup {
    const target = this.#table.partition(topic, partition);
    if (timestamp === LATEST_TIMESTAMP) return { offset: target.highWatermark, timestamp: -1, leaderEpoch: target.leaderEpoch };
    const start = localStartFor(target);
    if (timestamp === EARLIEST_TIMESTAMP || timestamp === EARLIEST_LOCAL_TIMESTAMP) return { offset: start, timestamp: -1, leaderEpoch: target.epochAt(start) };
    if (timestamp === LATEST_TIERED_TIMESTAMP) return { offset: -1, timestamp: -1, leaderEpoch: -1 }; // no tier: nothing tiered
    if (timestamp < 0 && timestamp !== MAX_TIMESTAMP) throw new FerryError('InvalidArgument', `timestamp ${timestamp} is not a time nor one of ListOffsets' special values`);
    // As Kafka: a lookup starts at the log start (PartitionLog's floor is DeleteRecords' start too).
    const found = timestamp === MAX_TIMESTAMP ? target.log.maxTimestampRecord() : target.log.offsetForTimestamp(timestamp);
    if (found === null || found.offset >= target.highWatermark) return { offset: -1, timestamp: -1, leaderEpoch: -1 };
    return { offset: found.offset, timestamp: found.timestamp, leaderEpoch: target.epochAt(found.offset) };
  }
}

/** The first offset clients may read from the local log: its first segment's, or above it where DeleteRecords moved the log start. */
export function localStartFor(target: Partition): number {
  return Math.max(target.log.logStartOffset, target.log.deletedBeforeOffset);
}

/** Kafka's answer to a read below the log start DeleteRecords set, wherever those records still lie. */
function checkNotDeleted(target: Partition, offset: number): void {
  const start = target.log.deletedBeforeOffset;
  if (offset < start) throw new FerryError('OffsetOutOfRange', `offset ${offset} is before the log start ${start} of ${target.topic}-${target.index}: its records were deleted`);
}
