import { FerryError, isFerryError } from '../errors.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { assert } from '../util/assert.ts';
import { type Clock, type Timer, yieldTurn } from '../util/clock.ts';
import { type Disk, readTextFileSync, systemDisk } from '../util/disk.ts';
import { writeFileAtomicSync } from '../util/files.ts';
import type { Uuid } from '../util/uuid.ts';
import { isOsError } from '../util/os-error.ts';
import { floorOf, listSequences, streamFloor } from '../wal/floor.ts';
import { listEpochs } from '../wal/seal.ts';
import { applyFrame } from './apply.ts';
import type { ObjectRead, ReadFrame, WalReader } from '../wal/reader.ts';

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

export interface FollowerStats {
  readonly position: StreamPosition | null;
  readonly objectsApplied: number;
  readonly framesApplied: number;
  readonly bytesApplied: number;
  readonly bytesRead: number;
  readonly polls: number;
  /** Objects that could not be read even after the reader's retries; the follower keeps trying. */
  readonly readFailures: number;
  /** Times the position was below its stream's WAL floor and moved up to it (objects WAL GC collected). */
  readonly floorSkips: number;
  /** Times a partition's log started over at the tier's end: its next frames lay past its end ([D4]). */
  readonly tierStarts: number;
}

/**
 * Rebuilds partition logs from a leader's WAL streams (docs/wal-protocol.md), never from the
 * leader itself: objects are applied strictly in sequence order, a missing sequence is waited
 * for and never skipped, a seal moves on to the writer's next epoch. Catch-up prefetches
 * objects ahead within a bound and still applies them in order. A stream is read from its WAL
 * floor: a position below it (a checkpoint older than what WAL GC collected) moves up to the floor;
 * the collected objects were covered, and if the logs still needed their frames the next frame
 * leaves a gap, which fails the follower (`failure`) rather than admitting it.
 */
export class Follower {
  readonly config: FollowerConfig;
  readonly #reader: WalReader;
  readonly #store: ObjectStore;
  readonly #target: FollowerTarget;
  readonly #clock: Clock;
  readonly #checkpointPath: string;
  readonly #disk: Disk;
  #position: StreamPosition | null;
  /** Logs applied to since the last checkpoint: flushed before the next one is written. */
  readonly #unflushed = new Set<PartitionLog>();
  readonly #prefetched = new Map<number, Promise<ObjectRead>>();
  #prefetchWindow = 1;
  #running = false;
  #loop: Promise<void> | null = null;
  #wake: (() => void) | null = null;
  #hinted = false;
  /** The next idle wait: back to pollIntervalMs whenever an object is applied or a hint arrives. */
  #idleWaitMs: number;
  #failure: Error | null = null;
  #lastCheckpointMs = -Infinity;
  #stats = { objectsApplied: 0, framesApplied: 0, bytesApplied: 0, bytesRead: 0, polls: 0, readFailures: 0, floorSkips: 0, tierStarts: 0 };
  /** Monotonic ms of the last floor check: -Infinity makes the first absent read (a position from the checkpoint) check at once. */
  #lastFloorCheckMs = -Infinity;
  #lastReadError: unknown = null;

  readonly #observer: FollowerObserver;

  constructor(store: ObjectStore, reader: WalReader, target: FollowerTarget, config: FollowerConfig, deps: { clock: Clock; checkpointPath: string; observer?: FollowerObserver; disk?: Disk }) {
    this.#observer = deps.observer ?? {};
    this.#store = store;
    this.#reader = reader;
    this.#target = target;
    this.config = config;
    this.#clock = deps.clock;
    this.#checkpointPath = deps.checkpointPath;
    this.#disk = deps.disk ?? systemDisk;
    this.#position = readCheckpoint(deps.checkpointPath, this.#disk);
    this.#idleWaitMs = config.pollIntervalMs;
  }

  /** Set when applying failed (a bug or a gap in the streams); the follower then stops. */
  get failure(): Error | null {
    return this.#failure;
  }

  /** The last error reading an object, kept for diagnosis while the follower retries. */
  get lastReadError(): unknown {
    return this.#lastReadError;
  }

  stats(): FollowerStats {
    return { ...this.#stats, position: this.#position };
  }

  start(): void {
    assert(!this.#running, 'follower already started');
    this.#running = true;
    this.#loop = this.#run().catch((error: unknown) => {
      this.#failure = error instanceof Error ? error : new Error(String(error));
      this.#running = false;
    });
  }

  /** A leader's hint that a new object exists: probe now instead of after the poll interval. */
  hint(): void {
    this.#idleWaitMs = this.config.pollIntervalMs;
    if (this.#wake !== null) this.#wake();
    else this.#hinted = true; // busy now: the next wait returns at once
  }

  /** Stops after the object being applied and saves the position. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#wake?.();
    await this.#loop;
    await this.#saveCheckpoint();
  }

  async #run(): Promise<void> {
    while (this.#running) {
      const position = this.#position ?? (await this.#firstPosition());
      if (position === null) {
        await this.#idle();
        continue;
      }
      this.#position = position;
      let read: ObjectRead;
      const fetchedAhead = this.#prefetched.has(position.sequence);
      try {
        read = await this.#next(position);
      } catch (error) {
        // The reader already retried with backoff: keep waiting, never skip the object.
        this.#stats.readFailures++;
        this.#lastReadError = error;
        this.#prefetched.clear();
        await this.#idle();
        continue;
      }
      if (!this.#running) break;
      if (read.kind === 'absent') {
        if (await this.#belowFloor(position)) continue;
        await this.#onAbsent(fetchedAhead);
      } else if (read.kind === 'seal') {
        this.#position = (await this.#nextEpoch(position)) ?? position;
        if (this.#position === position) await this.#idle();
        else this.#prefetched.clear();
      } else {
        try {
          await this.#apply(read);
        } catch (error) {
          if (!isOsError(error)) throw error;
          // EMFILE, ENOSPC: a fault of the machine, not of the stream. The object is applied
          // again after a wait (frames already in the log are skipped), as a failed read is.
          this.#lastReadError = error;
          this.#prefetched.clear();
          await this.#idle();
          continue;
        }
        this.#idleWaitMs = this.config.pollIntervalMs;
        this.#position = { epoch: position.epoch, sequence: position.sequence + 1 };
        this.#prefetchWindow = Math.min(this.config.prefetchObjectsMax, this.#prefetchWindow * 2);
        await this.#maybeCheckpoint();
        // Let the rest of the process run between objects: catching up applies many in a row
        // (measured: event-loop stalls of up to 1 s without this).
        await yieldTurn(this.#clock);
      }
    }
  }

  /** The object at `position`, with the following ones requested ahead while catching up. */
  #next(position: StreamPosition): Promise<ObjectRead> {
    const stream = { writerId: this.config.writerId, epoch: position.epoch };
    for (let sequence = position.sequence; sequence < position.sequence + this.#prefetchWindow; sequence++) {
      if (this.#prefetched.has(sequence)) continue;
      const pending = this.#reader.read(stream, sequence);
      pending.catch(() => {}); // a read fetched ahead may fail unobserved; it is awaited (and rethrows) in turn
      this.#prefetched.set(sequence, pending);
    }
    const read = this.#prefetched.get(position.sequence)!;
    this.#prefetched.delete(position.sequence);
    return read;
  }

  /**
   * Whether `position` (found absent) lies below its stream's WAL floor, checked by a LIST at most
   * every FOLLOWER_FLOOR_CHECK_INTERVAL_MS; if so the position moves to the floor, or to the next
   * epoch when nothing of the stream is left.
   */
  async #belowFloor(position: StreamPosition): Promise<boolean> {
    const nowMs = this.#clock.monotonicMs();
    if (nowMs - this.#lastFloorCheckMs < FOLLOWER_FLOOR_CHECK_INTERVAL_MS) return false;
    this.#lastFloorCheckMs = nowMs;
    const listed = await listSequences(this.#store, this.#reader.config.prefix, { writerId: this.config.writerId, epoch: position.epoch });
    const next = listed.size > 0 ? { epoch: position.epoch, sequence: floorOf(listed) } : await this.#nextEpoch(position);
    if (next === null || (next.epoch === position.epoch && next.sequence <= position.sequence)) return false;
    this.#stats.floorSkips++;
    this.#prefetched.clear();
    this.#position = next;
    return true;
  }

  /**
   * Not written yet: forget what was fetched ahead (it was absent too, or is still in flight)
   * and wait. An answer fetched ahead may be stale (the object landed since), so it is asked
   * again at once before waiting.
   */
  async #onAbsent(fetchedAhead: boolean): Promise<void> {
    this.#stats.polls++;
    this.#prefetchWindow = 1;
    this.#prefetched.clear();
    if (!fetchedAhead) await this.#idle();
  }

  /** Applies the frames of one object in order; each batch's CRC32C is checked by appendReplica. */
  async #apply(read: Extract<ObjectRead, { kind: 'data' }>): Promise<void> {
    const appliedBefore = this.#stats.bytesApplied;
    for (const frame of read.frames) await this.#applyFrame(frame, read.header.createdMs);
    this.#stats.objectsApplied++;
    this.#stats.bytesRead += read.bytesRead;
    // Object age bounds the lag from a leader's append to this apply (the object opened first).
    this.#observer.objectApplied?.(read.bytesRead, this.#stats.bytesApplied - appliedBefore, this.#clock.nowMs() - read.header.createdMs);
  }

  async #applyFrame(frame: ReadFrame, createdMs: number): Promise<void> {
    const { entry } = frame;
    const log = await this.#target.log(entry.topic, entry.partition, entry.topicId);
    if (log === null) return; // a frame of a deleted incarnation of the topic
    if (entry.baseOffset > log.logEndOffset && (await this.#target.startAtTier?.(log, entry.topicId, entry.partition, entry.baseOffset))) this.#stats.tierStarts++;
    const bytes = applyFrame(log, frame, entry.topicId);
    if (bytes === 0) return; // applied before a restart: the checkpoint lags by design
    this.#unflushed.add(log);
    this.#stats.framesApplied++;
    this.#stats.bytesApplied += bytes;
    this.#target.applied?.(entry.topic, entry.partition, log.logEndOffset, createdMs);
  }

  /** The first epoch of the writer that has objects, from its WAL floor; null while there is none. */
  async #firstPosition(): Promise<StreamPosition | null> {
    const epochs = await listEpochs(this.#store, this.#reader.config.prefix, this.config.writerId);
    return epochs.length === 0 ? null : this.#fromFloor(epochs[0]!);
  }

  async #nextEpoch(position: StreamPosition): Promise<StreamPosition | null> {
    const epochs = await listEpochs(this.#store, this.#reader.config.prefix, this.config.writerId);
    const next = epochs.find((epoch) => epoch > position.epoch);
    return next === undefined ? null : this.#fromFloor(next);
  }

  /** A stream is read from its floor: WAL GC deletes a prefix of it (docs/tier-protocol.md [G4]), never a hole. */
  async #fromFloor(epoch: number): Promise<StreamPosition> {
    return { epoch, sequence: await streamFloor(this.#store, this.#reader.config.prefix, { writerId: this.config.writerId, epoch }) };
  }

  /** Waits for the poll interval or a hint, whichever comes first. */
  #idle(): Promise<void> {
    if (this.#hinted) {
      this.#hinted = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      let timer: Timer | null = null;
      const done = () => {
        timer?.cancel();
        this.#wake = null;
        resolve();
      };
      this.#wake = done;
      timer = this.#clock.setTimer(this.#idleWaitMs, done);
      this.#idleWaitMs = Math.min(this.config.pollIntervalMaxMs, this.#idleWaitMs * 2);
    });
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
    const position = this.#position;
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
