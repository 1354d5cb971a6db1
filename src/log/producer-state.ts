import { join } from 'node:path';
import { pack, unpack } from 'msgpackr';
import { FerryError } from '../errors.ts';
import { type BatchHeader, NO_PRODUCER_EPOCH, NO_PRODUCER_ID, type RecordBatch } from '../format/record-batch.ts';
import { assert } from '../util/assert.ts';
import { regressed } from '../util/regressions.ts';
import { writeFileAtomicSync } from '../util/files.ts';
import { type Disk, systemDisk } from '../util/disk.ts';

/** Kafka keeps the metadata of each producer's last five batches to answer retried duplicates. */
export const PRODUCER_BATCHES_RETAINED = 5;
/**
 * Kafka's producer.id.expiration.ms (1 day): a producer silent this long, judged by the batch
 * timestamps in the log, is forgotten. Memory costs about 300 bytes per producer remembered.
 * Silence is measured on the log's time (its newest batch timestamp so far) from the log time at
 * the producer's last batch, not from that batch's own timestamp: a producer backfilling events
 * older than a day is still producing (issue 9 review).
 */
export const PRODUCER_ID_EXPIRATION_MS = 24 * 60 * 60 * 1000;
/** Log time between two sweeps of expired producers (Kafka's producer.id.expiration.check.interval.ms). */
const EXPIRATION_SWEEP_INTERVAL_MS = 10 * 60 * 1000;
/** Kafka's snapshot file names: the offset they cover up to, zero-padded to 20 digits. */
const SNAPSHOT_FILE_SUFFIX = '.snapshot';
const SNAPSHOT_FILE_DIGITS = 20;
/** 2: each producer carries the log time of its last batch. A version 1 snapshot is not read: the log is replayed. */
const SNAPSHOT_FORMAT_VERSION = 2;
const INT32_MAX = 0x7fffffff;

/** What is remembered of one batch of a producer (Kafka's BatchMetadata). */
export interface ProducerBatch {
  readonly firstSequence: number;
  readonly lastSequence: number;
  readonly baseOffset: number;
  readonly lastOffset: number;
  readonly maxTimestamp: number;
}

/** One idempotent producer as the partition's state knows it (Kafka's DescribeProducers entry, without transactions). */
export interface ActiveProducer {
  /** Its producer id (InitProducerId). */
  readonly producerId: number;
  /** Its current epoch: a batch of an older one is fenced. */
  readonly producerEpoch: number;
  /** The last sequence of its last batch. */
  readonly lastSequence: number;
  /** The max timestamp of its last batch. */
  readonly lastTimestamp: number;
}

interface ProducerEntry {
  epoch: number;
  /** The log's time when its last batch was applied: its silence is counted from here. */
  lastLogTimeMs: number;
  /** Oldest first, at most PRODUCER_BATCHES_RETAINED. */
  batches: ProducerBatch[];
}

/** Kafka's sequence arithmetic: sequences wrap from Int32 max to 0. */
function lastSequenceOf(batch: BatchHeader): number {
  const last = batch.baseSequence + batch.lastOffsetDelta;
  return last > INT32_MAX ? last - INT32_MAX - 1 : last;
}

function inSequence(lastSequence: number, nextSequence: number): boolean {
  return nextSequence === lastSequence + 1 || (lastSequence === INT32_MAX && nextSequence === 0);
}

export function snapshotFileName(offset: number): string {
  return String(offset).padStart(SNAPSHOT_FILE_DIGITS, '0') + SNAPSHOT_FILE_SUFFIX;
}

function parseSnapshotFileName(name: string): number | null {
  const match = /^(\d{20})\.snapshot$/.exec(name);
  const offset = Number(match?.[1]);
  return match !== null && Number.isSafeInteger(offset) ? offset : null;
}

/** A copy of a partition's producer state brought forward batch by batch (ProducerStateManager.replayFrom). */
export interface ProducerStateReplay {
  /** The next batch after those applied so far. */
  apply(batch: BatchHeader): void;
  /** The state once the batches up to `end` are applied, as snapshot bytes; kept as a file if it was replayed (see snapshotAt). */
  snapshotAt(end: number, keptAbove?: number): Uint8Array;
}

/**
 * Idempotent producers' state of one partition (Kafka's ProducerStateManager): per producer id
 * its epoch and its last batches' sequences and offsets. It is a function of the log: every batch
 * the log takes, led or replicated or replayed after a restart, goes through `apply`, so a leader,
 * a follower, a restarted broker and a rebuilt partition hold the same state for the same log.
 * `check` runs in the same synchronous section as the append it guards (no await in between).
 * Expiry is judged by the log's own time (its newest batch timestamp), not the wall clock, so a
 * replay of the same batches forgets the same producers.
 * Invariant: every remembered batch lies below `endOffset`, the log end this state describes.
 */
export class ProducerStateManager {
  readonly #directory: string;
  readonly #expirationMs: number;
  #producers = new Map<number, ProducerEntry>();
  /** The newest batch timestamp applied: the clock expiry is judged by. */
  #logTimeMs = -1;
  #lastSweepMs = -1;
  #endOffset = 0;

  readonly #disk: Disk;

  constructor(directory: string, expirationMs = PRODUCER_ID_EXPIRATION_MS, disk: Disk = systemDisk) {
    this.#directory = directory;
    this.#expirationMs = expirationMs;
    this.#disk = disk;
  }

  /** The log end this state describes: every batch below it was applied. */
  get endOffset(): number {
    return this.#endOffset;
  }

  get producerCount(): number {
    return this.#producers.size;
  }

  /**
   * Every producer not expired by the log's time, with its epoch and its last batch (Kafka's
   * activeProducers, what DescribeProducers lists), by producer id.
   */
  activeProducers(): ActiveProducer[] {
    const active: ActiveProducer[] = [];
    for (const [producerId, entry] of this.#producers) {
      const last = entry.batches.at(-1);
      if (this.#expired(entry) || last === undefined) continue;
      active.push({ producerId, producerEpoch: entry.epoch, lastSequence: last.lastSequence, lastTimestamp: last.maxTimestamp });
    }
    return active.sort((a, b) => a.producerId - b.producerId);
  }

  /** The last batches remembered for `producerId` (oldest first); empty when unknown or expired. */
  batchesOf(producerId: number): readonly ProducerBatch[] {
    return this.#live(producerId)?.batches ?? [];
  }

  /**
   * Before a leader appends `batches`: the original of a retried batch (same producer, epoch and
   * sequence range as one of its last five), or null to append them. Throws InvalidProducerEpoch
   * for an older epoch and OutOfOrderSequence for a gap, as Kafka does. A producer this state does
   * not know (new, expired, or its batches truncated away) is accepted at any sequence, as Kafka
   * 2.5+ does (KIP-360): UNKNOWN_PRODUCER_ID is only for clients older than that.
   */
  check(batches: readonly RecordBatch[]): ProducerBatch | null {
    const pending = new Map<number, { epoch: number; lastSequence: number }>();
    for (const batch of batches) {
      const producerId = batch.producerId;
      if (producerId === NO_PRODUCER_ID) continue;
      const entry = this.#live(producerId);
      const duplicate = pending.has(producerId)
        ? undefined
        : entry?.batches.find((b) => entry.epoch === batch.producerEpoch && b.firstSequence === batch.baseSequence && b.lastSequence === lastSequenceOf(batch));
      if (duplicate !== undefined) {
        if (batches.length > 1) throw new FerryError('InvalidArgument', `a retried batch of producer ${producerId} (sequence ${batch.baseSequence}) must be sent alone`);
        if (regressed('duplicate-answer-latest-offset')) return entry!.batches.at(-1)!; // the producer's last batch, not the one retried
        return duplicate;
      }
      const known = pending.get(producerId) ?? (entry === undefined ? undefined : { epoch: entry.epoch, lastSequence: entry.batches.at(-1)?.lastSequence ?? -1 });
      checkSequence(producerId, known, batch);
      pending.set(producerId, { epoch: batch.producerEpoch, lastSequence: lastSequenceOf(batch) });
    }
    return null;
  }

  /** Takes a batch the log now holds (after its write succeeded), in offset order. */
  apply(batch: BatchHeader): void {
    assert(batch.baseOffset >= this.#endOffset, `producer state at ${this.#endOffset} cannot take batch ${batch.baseOffset}`);
    this.#endOffset = batch.nextOffset;
    const producerId = batch.producerId;
    const known = producerId === NO_PRODUCER_ID ? undefined : this.#live(producerId); // judged as `check` judged it
    this.#logTimeMs = Math.max(this.#logTimeMs, batch.maxTimestamp);
    if (producerId !== NO_PRODUCER_ID && batch.producerEpoch !== NO_PRODUCER_EPOCH) {
      let entry = known;
      if (entry === undefined || batch.producerEpoch !== entry.epoch) {
        // A new producer or a new epoch: its earlier batches no longer answer duplicates (Kafka).
        entry = { epoch: batch.producerEpoch, lastLogTimeMs: this.#logTimeMs, batches: [] };
        this.#producers.set(producerId, entry);
      }
      entry.lastLogTimeMs = this.#logTimeMs;
      entry.batches.push({ firstSequence: batch.baseSequence, lastSequence: lastSequenceOf(batch), baseOffset: batch.baseOffset, lastOffset: batch.lastOffset, maxTimestamp: batch.maxTimestamp });
      if (regressed('duplicate-window-short') ? entry.batches.length >= PRODUCER_BATCHES_RETAINED : entry.batches.length > PRODUCER_BATCHES_RETAINED) entry.batches.shift();
    }
    if (this.#logTimeMs - this.#lastSweepMs >= EXPIRATION_SWEEP_INTERVAL_MS) this.#sweep();
  }

  /** Notes log offsets that hold no batch to apply (a log that starts above 0). */
  skipTo(offset: number): void {
    this.#endOffset = Math.max(this.#endOffset, offset);
  }

  /** Writes `<offset>.snapshot` atomically and durably; `offset` must be this state's end. */
  writeSnapshot(): void {
    writeFileAtomicSync(join(this.#directory, snapshotFileName(this.#endOffset)), this.encodeSnapshot(), this.#disk);
  }

  /** The state as the bytes of its snapshot file: what a tiered segment carries of it (docs/design.md contract 11). */
  encodeSnapshot(): Uint8Array {
    this.#sweep();
    const producers = [...this.#producers].map(([id, entry]) => [
      id,
      entry.epoch,
      entry.lastLogTimeMs,
      entry.batches.map((b) => [b.firstSequence, b.lastSequence, b.baseOffset, b.lastOffset, b.maxTimestamp]),
    ]);
    return pack({ version: SNAPSHOT_FORMAT_VERSION, endOffset: this.#endOffset, logTimeMs: this.#logTimeMs, producers });
  }

  /**
   * Restores the newest readable snapshot at or below `logEndOffset` and deletes any above it
   * (they describe offsets a truncation removed). Returns the offset it covers up to (where the
   * caller replays from), or 0 with an empty state when none is usable.
   */
  loadSnapshot(logEndOffset: number): number {
    if (regressed('producer-state-not-rebuilt')) {
      this.#clear(0);
      return logEndOffset; // nothing replayed: the state starts empty
    }
    const offsets = listSnapshots(this.#directory, this.#disk);
    for (const offset of offsets.filter((o) => o > logEndOffset)) this.#disk.unlinkSync(join(this.#directory, snapshotFileName(offset)));
    return this.#loadNewestAtOrBelow(logEndOffset);
  }

  /**
   * The state at `offset` as snapshot bytes, for a copy of the log up to there (a tiered
   * segment, docs/design.md contract 11): the snapshot file at `offset` if there is one, else the newest below
   * it (or the state at `fromOffset`, the log start, when none) and `replay` of the batches from
   * its end up to `offset`. This state does not change. A state that had to be replayed is kept as
   * `<offset>.snapshot` (as a roll writes one): the tierer asks for one at each end it tiers, and
   * each would else replay the segment from its base. Those kept earlier above `keptAbove` (the
   * base of the segment holding `offset`, whose roll snapshot stays) go: the next end asked for
   * lies past this one, and a quiet partition, tiered every TIER_TAIL_MAX_MS, kept one file per
   * piece for as long as its segment lived (review).
   */
  snapshotAt(offset: number, fromOffset: number, replay: (from: number, to: number, apply: (batch: BatchHeader) => void) => void, keptAbove = offset): Uint8Array {
    return this.replayFrom(offset, fromOffset, replay).snapshotAt(offset, keptAbove);
  }

  /**
   * The state at `offset` (as `snapshotAt` finds it), for a caller that then walks the batches
   * after it anyway and hands each to `apply`, in order: `snapshotAt(end)` is then the state at
   * the end of the walk without a second read of the log (the tierer reads every batch it tiers;
   * replaying their headers again at the end was a synchronous read of the whole range).
   */
  replayFrom(offset: number, fromOffset: number, replay: (from: number, to: number, apply: (batch: BatchHeader) => void) => void): ProducerStateReplay {
    const copy = new ProducerStateManager(this.#directory, this.#expirationMs, this.#disk);
    const loadedEnd = Math.max(copy.#loadNewestAtOrBelow(offset), fromOffset);
    copy.skipTo(fromOffset);
    if (copy.#endOffset < offset) replay(copy.#endOffset, offset, (batch) => copy.apply(batch));
    assert(copy.#endOffset === offset, `producer state replayed to ${copy.#endOffset}, not ${offset}`);
    return {
      apply: (batch) => copy.apply(batch),
      snapshotAt: (end, keptAbove = end) => {
        assert(copy.#endOffset === end, `producer state replayed to ${copy.#endOffset}, not ${end}`);
        const kept = listSnapshots(this.#directory, this.#disk);
        // A file at `end` already (a roll's) is the state there: left as it is, as a replay that found it would.
        if (loadedEnd < end && !kept.includes(end)) {
          copy.#keepSnapshot();
          for (const stale of kept.filter((at) => at > keptAbove && at < end)) this.#unlinkQuietly(stale);
        }
        return copy.encodeSnapshot();
      },
    };
  }

  #unlinkQuietly(offset: number): void {
    try {
      this.#disk.unlinkSync(join(this.#directory, snapshotFileName(offset)));
    } catch {
      // Left behind: an older shortcut, never read while a newer one is there.
    }
  }

  /** writeSnapshot that only shortcuts: a failure leaves the next replay longer, nothing else. */
  #keepSnapshot(): void {
    try {
      this.writeSnapshot();
    } catch {
      // Only the shortcut is lost.
    }
  }

  /**
   * Forgets everything, snapshot files included, and starts at `offset` with `snapshot` (another
   * copy's state there, encodeSnapshot) or none (PartitionLog.startAt). Throws CorruptObject,
   * before anything changes, if `snapshot` is not one of `offset`.
   */
  startAt(offset: number, snapshot: Uint8Array | null): void {
    const decoded = snapshot === null ? null : checkedSnapshot(snapshot, offset);
    for (const stale of listSnapshots(this.#directory, this.#disk)) this.#disk.unlinkSync(join(this.#directory, snapshotFileName(stale)));
    this.#clear(offset);
    if (snapshot === null || decoded === null) return;
    writeFileAtomicSync(join(this.#directory, snapshotFileName(offset)), snapshot, this.#disk);
    this.#take(decoded);
  }

  /** The newest readable snapshot at or below `offset` as this state; returns its offset, or 0 with an empty state. */
  #loadNewestAtOrBelow(offset: number): number {
    this.#clear(0);
    for (const at of listSnapshots(this.#directory, this.#disk)
      .filter((o) => o <= offset)
      .reverse()) {
      if (this.#read(at)) return at;
    }
    return 0;
  }

  #clear(endOffset: number): void {
    this.#producers = new Map();
    this.#logTimeMs = -1;
    this.#lastSweepMs = -1;
    this.#endOffset = endOffset;
  }

  /** Deletes snapshots below `offset` except the newest of them (retention moved the log start). */
  deleteSnapshotsBefore(offset: number): void {
    const older = listSnapshots(this.#directory, this.#disk).filter((o) => o < offset);
    for (const stale of older.slice(0, -1)) this.#disk.unlinkSync(join(this.#directory, snapshotFileName(stale)));
  }

  #read(offset: number): boolean {
    let decoded: DecodedSnapshot | null = null;
    try {
      decoded = decodeSnapshot(this.#disk.readFileSync(join(this.#directory, snapshotFileName(offset))));
    } catch {
      decoded = null;
    }
    if (decoded === null || decoded.endOffset !== offset) return false; // unreadable: an older snapshot, or a replay from the log start, rebuilds it
    this.#take(decoded);
    return true;
  }

  #take(decoded: DecodedSnapshot): void {
    this.#producers = decoded.producers;
    this.#logTimeMs = decoded.logTimeMs;
    this.#lastSweepMs = decoded.logTimeMs;
    this.#endOffset = decoded.endOffset;
  }

  /** The producer's entry unless it expired by the log's time. */
  #live(producerId: number): ProducerEntry | undefined {
    const entry = this.#producers.get(producerId);
    if (entry === undefined || !this.#expired(entry)) return entry;
    this.#producers.delete(producerId);
    return undefined;
  }

  #expired(entry: ProducerEntry): boolean {
    return entry.batches.length === 0 || this.#logTimeMs - entry.lastLogTimeMs >= this.#expirationMs;
  }

  /** Forgets expired producers; lookups already ignore them, this bounds the memory. */
  #sweep(): void {
    this.#lastSweepMs = this.#logTimeMs;
    for (const [id, entry] of this.#producers) if (this.#expired(entry)) this.#producers.delete(id);
  }
}

interface DecodedSnapshot {
  readonly endOffset: number;
  readonly logTimeMs: number;
  readonly producers: Map<number, ProducerEntry>;
}

/** `bytes` as the state at `offset`; CorruptObject if they are not a snapshot of this version, or of another offset. */
export function checkedSnapshot(bytes: Uint8Array, offset: number): DecodedSnapshot {
  const decoded = decodeSnapshot(bytes);
  if (decoded === null || decoded.endOffset !== offset)
    throw new FerryError('CorruptObject', `a producer snapshot for offset ${offset} is ${decoded === null ? 'unreadable' : `of offset ${decoded.endOffset}`}`);
  return decoded;
}

/** A snapshot's bytes as state, or null if they are not a snapshot of this version. */
function decodeSnapshot(bytes: Uint8Array): DecodedSnapshot | null {
  try {
    const decoded = unpack(bytes) as { version: number; endOffset: number; logTimeMs: number; producers: [number, number, number, number[][]][] };
    if (decoded.version !== SNAPSHOT_FORMAT_VERSION || !Number.isSafeInteger(decoded.endOffset)) return null;
    const producers = new Map<number, ProducerEntry>();
    for (const [id, epoch, lastLogTimeMs, batches] of decoded.producers) {
      producers.set(id, {
        epoch,
        lastLogTimeMs,
        batches: batches.map(([firstSequence, lastSequence, baseOffset, lastOffset, maxTimestamp]) => ({
          firstSequence: firstSequence!,
          lastSequence: lastSequence!,
          baseOffset: baseOffset!,
          lastOffset: lastOffset!,
          maxTimestamp: maxTimestamp!,
        })),
      });
    }
    return { endOffset: decoded.endOffset, logTimeMs: decoded.logTimeMs, producers };
  } catch {
    return null;
  }
}

function checkSequence(producerId: number, known: { epoch: number; lastSequence: number } | undefined, batch: RecordBatch): void {
  if (known === undefined) return;
  const epoch = batch.producerEpoch;
  if (epoch < known.epoch) {
    throw new FerryError('InvalidProducerEpoch', `producer ${producerId} epoch ${epoch} is older than its current epoch ${known.epoch}`);
  }
  if (epoch > known.epoch) {
    if (batch.baseSequence !== 0) throw new FerryError('OutOfOrderSequence', `producer ${producerId} starts epoch ${epoch} at sequence ${batch.baseSequence}, not 0`);
    return;
  }
  if (!inSequence(known.lastSequence, batch.baseSequence)) {
    throw new FerryError('OutOfOrderSequence', `producer ${producerId} sent sequence ${batch.baseSequence} after ${known.lastSequence}`);
  }
}

function listSnapshots(directory: string, disk: Disk): number[] {
  if (!disk.existsSync(directory)) return [];
  return disk
    .readdirSync(directory)
    .map(parseSnapshotFileName)
    .filter((o) => o !== null)
    .sort((a, b) => a - b);
}
