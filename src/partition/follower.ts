import { FerryError, isFerryError } from '../errors.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import type { ObjectStore } from '../store/object-store.ts';
import type { Clock } from '../util/clock.ts';
import { type Disk, readTextFileSync, systemDisk } from '../util/disk.ts';
import { writeFileAtomicSync } from '../util/files.ts';
import type { Uuid } from '../util/uuid.ts';
import { isOsError } from '../util/os-error.ts';
import type { StreamId } from '../wal/keys.ts';
import type { ReadFrame, WalReader } from '../wal/reader.ts';
import { listEpochs } from '../wal/seal.ts';
import { type DataRead, StreamTail, type StreamTailStats, type StreamTailUser, type TailMember, type TailPosition, type TailStart } from './stream-tail.ts';

export interface FollowerConfig {
  /** The leader whose WAL streams this follower applies. */
  readonly writerId: string;
  /** Wait this long before probing again for an object that is not there yet (unless hinted). */
  readonly pollIntervalMs: number;
  /** While nothing new comes, the wait doubles up to this: each probe of a missing object is a billed GET. */
  readonly pollIntervalMaxMs: number;
  /** Objects fetched ahead while catching up; 1 at the tail, where the next one does not exist yet. */
  readonly prefetchObjectsMax: number;
  /**
   * Save the stream position at most this often (re-applying after a crash is idempotent). Each
   * save first flushes the logs applied since the last one: a checkpoint must never be ahead of
   * the data it covers.
   */
  readonly checkpointIntervalMs: number;
}

export const DEFAULT_FOLLOWER_CONFIG: Omit<FollowerConfig, 'writerId'> = {
  pollIntervalMs: 10,
  pollIntervalMaxMs: 100,
  prefetchObjectsMax: 16,
  checkpointIntervalMs: 1000,
};

/**
 * How often a follower that keeps finding its next object absent LISTs the stream to compare its
 * floor (docs/tier-protocol.md [G4]): absent is normally the stream's end, but after a long pause
 * WAL GC may have collected past the position. One LIST a minute while idle (about 43,000 a month)
 * against a follower stuck for good.
 */
export const FOLLOWER_FLOOR_CHECK_INTERVAL_MS = 60_000;

export interface StreamPosition {
  readonly epoch: number;
  readonly sequence: number;
}

/** What a metrics sink hears from a follower; all optional. */
export interface FollowerObserver {
  /** One object applied: bytes read for it, batch bytes applied, and its age (now - createdMs). */
  objectApplied?(bytesRead: number, bytesApplied: number, ageMs: number): void;
}

/** Where applied data goes and who hears of it. */
export interface FollowerTarget {
  /**
   * The local log of a replicated partition of the topic incarnation `topicId` (the reader's
   * `wants` decides which exist); null for an incarnation that was deleted: its frames are skipped.
   * It may take a while (meeting a new incarnation, the old one's logs are closed and removed).
   */
  log(topic: string, partition: number, topicId: Uuid): PartitionLog | null | Promise<PartitionLog | null>;
  /** The follower applied up to `logEndOffset` (exclusive): reported to the leader for acks=all. */
  applied?(topic: string, partition: number, logEndOffset: number, objectCreatedMs: number): void;
  /**
   * docs/tier-protocol.md [D4] for a library read replica: the WAL continues at `fromOffset`, past
   * `log`'s end (WAL GC collected the frames between, as they are tiered). Starts `log` at the
   * tier's end, with its producer state and epochs, if that end reaches `fromOffset`; false if it
   * does not (or there is no tier): the gap stays a failure.
   */
  startAtTier?(log: PartitionLog, topicId: Uuid, partition: number, fromOffset: number): Promise<boolean>;
}

/** Its one stream tail's counts, with where it stands and how often it started over at the tier. */
export interface FollowerStats extends StreamTailStats {
  readonly position: StreamPosition | null;
  /** Times a partition's log started over at the tier's end: its next frames lay past its end ([D4]). */
  readonly tierStarts: number;
}

/**
 * Rebuilds partition logs from a leader's WAL streams (docs/wal-protocol.md), never from the
 * leader itself: a StreamTail over the writer's epochs one after another (a seal moves on to the
 * writer's next epoch), applying to whichever partition the target gives for a frame, with its
 * position saved to a checkpoint file. A position below a stream's floor (a checkpoint older than
 * what WAL GC collected) moves up to the floor; the collected objects were covered, and if the logs
 * still needed their frames the next frame leaves a gap: the partition starts at the tier's end
 * when that reaches it ([D4]), or the follower fails (`failure`) rather than admitting the gap.
 */
export class Follower {
  readonly config: FollowerConfig;
  readonly #tail: StreamTail<TailMember>;
  readonly #store: ObjectStore;
  readonly #reader: WalReader;
  readonly #target: FollowerTarget;
  readonly #observer: FollowerObserver;
  readonly #clock: Clock;
  readonly #checkpointPath: string;
  readonly #disk: Disk;
  /** Logs applied to since the last checkpoint: flushed before the next one is written. */
  readonly #unflushed = new Set<PartitionLog>();
  #lastCheckpointMs = -Infinity;
  #tierStarts = 0;
  #lastReadError: unknown = null;

  constructor(store: ObjectStore, reader: WalReader, target: FollowerTarget, config: FollowerConfig, deps: { clock: Clock; checkpointPath: string; observer?: FollowerObserver; disk?: Disk }) {
    this.#store = store;
    this.#reader = reader;
    this.#target = target;
    this.config = config;
    this.#observer = deps.observer ?? {};
    this.#clock = deps.clock;
    this.#checkpointPath = deps.checkpointPath;
    this.#disk = deps.disk ?? systemDisk;
    const saved = readCheckpoint(deps.checkpointPath, this.#disk);
    const start = saved === null ? null : { stream: this.#streamOf(saved.epoch), sequence: saved.sequence };
    const tailConfig = { ...config, floorCheckIdleMs: FOLLOWER_FLOOR_CHECK_INTERVAL_MS, floorCheckBehindMs: FOLLOWER_FLOOR_CHECK_INTERVAL_MS };
    this.#tail = new StreamTail(reader, this.#tailUser(), tailConfig, { clock: deps.clock, start });
  }

  /** Set when applying failed (a bug or a gap in the streams); the follower then stops. */
  get failure(): Error | null {
    return this.#tail.failure;
  }

  /** The last error reading an object, kept for diagnosis while the follower retries. */
  get lastReadError(): unknown {
    return this.#lastReadError;
  }

  stats(): FollowerStats {
    return { ...this.#tail.stats(), tierStarts: this.#tierStarts, position: this.#position() };
  }

  start(): void {
    this.#tail.start();
  }

  /** A leader's hint that a new object exists: probe now instead of after the poll interval; `through`: its durable end (ST4). */
  hint(through?: TailPosition): void {
    this.#tail.hint(through);
  }

  /** Stops after the object being applied and saves the position. */
  async stop(): Promise<void> {
    await this.#tail.stop();
    await this.#saveCheckpoint();
  }

  #tailUser(): StreamTailUser<TailMember> {
    return {
      memberOf: (frame) => this.#memberOf(frame),
      beyondLogEnd: (member, frame) => this.#beyondLogEnd(member, frame),
      applied: (member, createdMs) => {
        this.#unflushed.add(member.log);
        this.#target.applied?.(member.topic, member.partition, member.log.logEndOffset, createdMs);
      },
      objectApplied: (read, bytesApplied) => this.#objectApplied(read, bytesApplied),
      next: (from) => this.#nextEpoch(from === null ? null : from.epoch),
      // [G4] GC took the stream's prefix: on from its floor, or from the next epoch once nothing of it is left.
      floorPassed: (position, floor) => (floor === null ? this.#nextEpoch(position.stream.epoch) : { stream: position.stream, sequence: floor }),
      stepFailed: (error, { applying }) => {
        // A frame the log refuses is a gap or a bug: the follower stops. EMFILE, ENOSPC while applying
        // are faults of the machine, not of the stream: the object is applied again after a wait
        // (frames already in the log are skipped), as a failed read is.
        if (applying && !isOsError(error)) throw error;
        this.#lastReadError = error;
      },
    };
  }

  async #memberOf(frame: ReadFrame): Promise<TailMember | null> {
    const { topic, partition, topicId } = frame.entry;
    const log = await this.#target.log(topic, partition, topicId);
    return log === null ? null : { topic, partition, topicId, log }; // null: a frame of a deleted incarnation of the topic
  }

  /** [D4] The log starts at the tier's end if that reaches the frame; if not, applyFrame refuses the gap. */
  async #beyondLogEnd(member: TailMember, frame: ReadFrame): Promise<'apply'> {
    if (await this.#target.startAtTier?.(member.log, member.topicId, member.partition, frame.entry.baseOffset)) this.#tierStarts++;
    return 'apply';
  }

  async #objectApplied(read: DataRead, bytesApplied: number): Promise<void> {
    // Object age bounds the lag from a leader's append to this apply (the object opened first).
    this.#observer.objectApplied?.(read.bytesRead, bytesApplied, this.#clock.nowMs() - read.header.createdMs);
    await this.#maybeCheckpoint();
  }

  /** The writer's first epoch after `epoch` (any, for null) that has objects, from its WAL floor; null while there is none. */
  async #nextEpoch(epoch: number | null): Promise<TailStart | null> {
    const epochs = await listEpochs(this.#store, this.#reader.config.prefix, this.config.writerId);
    const next = epochs.find((candidate) => epoch === null || candidate > epoch);
    return next === undefined ? null : { stream: this.#streamOf(next), sequence: null };
  }

  #streamOf(epoch: number): StreamId {
    return { writerId: this.config.writerId, epoch };
  }

  #position(): StreamPosition | null {
    const position = this.#tail.position;
    return position === null ? null : { epoch: position.stream.epoch, sequence: position.sequence };
  }

  async #maybeCheckpoint(): Promise<void> {
    const nowMs = this.#clock.monotonicMs();
    if (nowMs - this.#lastCheckpointMs < this.config.checkpointIntervalMs) return;
    this.#lastCheckpointMs = nowMs;
    await this.#saveCheckpoint();
  }

  /**
   * Saves the position once the data below it is on disk. The other order (the position first)
   * loses to a power cut: the log forgets what it had not synced, the checkpoint does not, and
   * on restart the next frame lies past the log's end, a gap the follower never gets past. If a
   * flush fails the old checkpoint stays, and the logs are flushed again at the next save.
   */
  async #saveCheckpoint(): Promise<void> {
    const position = this.#position();
    if (position === null) return;
    const logs = [...this.#unflushed];
    this.#unflushed.clear();
    const flushed = await Promise.all(logs.map((log) => flushedOrClosed(log)));
    if (flushed.includes(false)) {
      for (const log of logs) this.#unflushed.add(log);
      return; // the log reports its own failure to whoever appends next
    }
    try {
      writeFileAtomicSync(this.#checkpointPath, new TextEncoder().encode(JSON.stringify({ writerId: this.config.writerId, ...position })), this.#disk);
    } catch (error) {
      if (!isOsError(error)) throw error; // EMFILE, ENOSPC: the old checkpoint stays (a restart re-applies more); the next save tries again
    }
  }
}

/** True once `log` is on disk; a log closed meanwhile (a released partition) was flushed by its close. */
async function flushedOrClosed(log: PartitionLog): Promise<boolean> {
  try {
    await log.flush();
    return true;
  } catch (error) {
    return isFerryError(error, 'Closed');
  }
}

function readCheckpoint(path: string, disk: Disk): StreamPosition | null {
  if (!disk.existsSync(path)) return null;
  const parsed = JSON.parse(readTextFileSync(disk, path)) as { epoch: number; sequence: number };
  if (!Number.isSafeInteger(parsed.epoch) || !Number.isSafeInteger(parsed.sequence)) throw new FerryError('Storage', `${path} is not a follower checkpoint`);
  return { epoch: parsed.epoch, sequence: parsed.sequence };
}
