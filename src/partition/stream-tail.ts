import type { PartitionLog } from '../log/partition-log.ts';
import { assert } from '../util/assert.ts';
import { type BackoffPolicy, backoffDelayMs } from '../util/backoff.ts';
import { type Clock, type Timer, yieldTurn } from '../util/clock.ts';
import type { Random } from '../util/random.ts';
import type { Uuid } from '../util/uuid.ts';
import { floorOf, listSequences } from '../wal/floor.ts';
import { type StreamId, sameStream } from '../wal/keys.ts';
import type { ObjectRead, ReadFrame, WalReader } from '../wal/reader.ts';
import { applyFrame } from './apply.ts';

/** Where a tail reads next; `sequence` null: from the stream's WAL floor, which a LIST finds [G4]. */
export interface TailStart {
  readonly stream: StreamId;
  readonly sequence: number | null;
}

export interface TailPosition {
  readonly stream: StreamId;
  readonly sequence: number;
}

/** A partition a tail applies frames to: one incarnation (`topicId`) of it, in `log`. */
export interface TailMember {
  readonly topic: string;
  readonly partition: number;
  readonly topicId: Uuid;
  readonly log: PartitionLog;
}

export type DataRead = Extract<ObjectRead, { kind: 'data' }>;

export interface StreamTailConfig {
  /** Wait after finding nothing new; doubles while the stream stays idle, up to pollIntervalMaxMs: each probe of a missing object is a billed GET. */
  readonly pollIntervalMs: number;
  readonly pollIntervalMaxMs: number;
  /** Objects fetched ahead while catching up (the window doubles with each object applied); 1 at the tail, where the next one does not exist yet. */
  readonly prefetchObjectsMax: number;
  /** [D4] How long the tail may find nothing, no member behind its leader, before it LISTs its stream to compare the floor. */
  readonly floorCheckIdleMs: number;
  /** [D4] How long a member may stay behind its leader's high watermark while the tail finds nothing before the tail LISTs its stream. */
  readonly floorCheckBehindMs: number;
  /** A failed step waits by this policy (full jitter) before it is tried again; without one, it waits as an idle poll does. */
  readonly retry?: BackoffPolicy;
}

/** What one user of the loop decides: where members come from, where a sealed stream leads, what a gap or a fault means. */
export interface StreamTailUser<M extends TailMember> {
  /** The member a frame is for; null: nobody here follows it (skipped). May wait (a partition opened for it). */
  memberOf(frame: ReadFrame): M | null | Promise<M | null>;
  /**
   * [D4] A frame of the member's incarnation starts past its log's end (WAL GC collected the
   * frames between): 'apply' once the log was moved up (or to let applyFrame refuse the gap),
   * 'skip' when the member left the tail over it.
   */
  beyondLogEnd(member: M, frame: ReadFrame, sequence: number): 'apply' | 'skip' | Promise<'apply' | 'skip'>;
  /** A frame the member's log refused (applyFrame threw). Without this hook the step fails with the error. */
  applyFailed?(member: M, sequence: number, error: unknown): void;
  /** Bytes of a frame went into the member's log (an object created at `createdMs`). */
  applied(member: M, createdMs: number): void;
  /** One object applied, the position already past it. */
  objectApplied?(read: DataRead, bytesApplied: number): void | Promise<void>;
  /** Where the tail goes on: after `from` (sealed), or to start (`from` null, no start given). Null: nowhere yet, poll again. */
  next(from: StreamId | null): Promise<TailStart | null>;
  /** [D4] The stream's floor (null: it holds nothing) lies above the position: where the tail goes on, or null to stay. */
  floorPassed(position: TailPosition, floor: number | null): TailStart | null | Promise<TailStart | null>;
  /** Before each read (a cluster's joiners catch up and join here). */
  beforeRead?(): Promise<void>;
  /** Whether a member's log ends below its leader's high watermark as last heard [D4]. */
  anyBehindLeader?(): boolean;
  /** A step threw (`applying`: while applying frames): report it, or rethrow to stop the tail for good (`failure`). */
  stepFailed(error: unknown, fault: { applying: boolean; failures: number; waitMs: number }): void;
}

export interface StreamTailStats {
  readonly objectsApplied: number;
  readonly framesApplied: number;
  readonly bytesApplied: number;
  readonly bytesRead: number;
  /** Reads that found the next object absent (the stream's end, normally). */
  readonly polls: number;
  /** Objects that could not be read even after the reader's retries; the tail keeps trying. */
  readonly readFailures: number;
  /** Times the position was below its stream's WAL floor and moved on ([D4], [G4]). */
  readonly floorSkips: number;
}

type Outcome = 'data' | 'idle' | 'again';

/**
 * The one loop that follows WAL streams (docs/wal-protocol.md), for a library read replica and a
 * cluster's followers alike: objects are applied strictly in sequence order, a missing sequence is
 * waited for (backing off while idle) and never skipped, a seal hands over to the user's next
 * stream. Catching up, objects are fetched ahead within a window and still applied in order.
 * - ST1 [G4] A stream is read from its WAL floor; a start that no LIST just saw present (a
 *   checkpoint) or that a LIST saw present is checked against the floor at once if found absent.
 * - ST2 [D4] While the next object stays absent, the stream is LISTed now and then
 *   (`floorCheckIdleMs`, sooner while a member lags its leader): a floor above the position means
 *   WAL GC took it, and the user says where to go on. A gap is never admitted: applyFrame refuses it.
 * - ST3 A failed step (a GET, a LIST, a log that refused a frame) is retried from where it was.
 * - ST4 A hint may name the leader's durable end: the tail neither reads nor fetches ahead past it
 *   in that stream, and waits for the next hint instead, for one idle wait at most.
 */
export class StreamTail<M extends TailMember> {
  readonly config: StreamTailConfig;
  readonly #reader: WalReader;
  readonly #user: StreamTailUser<M>;
  readonly #clock: Clock;
  readonly #random: Random | null;
  #pendingStart: TailStart | null = null;
  #position: TailPosition | null = null;
  /** ST1: a start sequence to compare with the floor at once if it is found absent; null: none. */
  #verifyAt: number | null = null;
  readonly #prefetched = new Map<number, Promise<ObjectRead>>();
  #prefetchWindow = 1;
  /**
   * Whether the object being read was asked for after a wait (idle, a hint, a retry): found then,
   * the tail is at the stream's end, not behind it, and the window does not grow. At the end each
   * object then costs its GET and one probe, not reads past the end; catching up, the window
   * grows from the first object on.
   */
  #askedAfterWait = false;
  #running = false;
  #loop: Promise<void> | null = null;
  #wake: (() => void) | null = null;
  #hinted = false;
  /** ST4: the furthest durable position a hint named (every object of its stream up to it is durable, [W5]); null: no hint named one. */
  #hintedThrough: TailPosition | null = null;
  /** ST4: the tail skipped a probe past the hinted end once: after that wait it probes anyway (hints may stop). */
  #skippedProbe = false;
  /** The next idle wait: back to pollIntervalMs whenever an object is applied or a hint arrives. */
  #idleWaitMs: number;
  #failures = 0;
  #applying = false;
  #failure: Error | null = null;
  /** Monotonic ms since the tail has found nothing at its position (ST2); null: it just moved. */
  #absentSinceMs: number | null = null;
  /** Monotonic ms since a member has been behind its leader while the tail found nothing (ST2); null: none is. */
  #behindSinceMs: number | null = null;
  #stats = { objectsApplied: 0, framesApplied: 0, bytesApplied: 0, bytesRead: 0, polls: 0, readFailures: 0, floorSkips: 0 };

  constructor(reader: WalReader, user: StreamTailUser<M>, config: StreamTailConfig, deps: { clock: Clock; random?: Random; start?: TailStart | null }) {
    assert(config.prefetchObjectsMax >= 1 && config.pollIntervalMs <= config.pollIntervalMaxMs, 'a stream tail needs a prefetch window and a poll interval within its cap');
    assert(config.retry === undefined || deps.random !== undefined, 'a retry policy needs a random source for its jitter');
    this.#reader = reader;
    this.#user = user;
    this.config = config;
    this.#clock = deps.clock;
    this.#random = deps.random ?? null;
    this.#idleWaitMs = config.pollIntervalMs;
    const start = deps.start ?? null;
    if (start === null || start.sequence === null) this.#pendingStart = start;
    else this.#placeAt(start.stream, start.sequence); // a position known before the first read (stats, a stop saving it)
  }

  /** Where the tail reads next; null before its first stream is found. */
  get position(): TailPosition | null {
    return this.#position;
  }

  /** Set when a step failed and the user rethrew it; the tail has stopped. */
  get failure(): Error | null {
    return this.#failure;
  }

  get running(): boolean {
    return this.#running;
  }

  stats(): StreamTailStats {
    return { ...this.#stats };
  }

  start(): void {
    assert(this.#loop === null, 'stream tail already started');
    this.#running = true;
    this.#loop = this.#run().catch((error: unknown) => {
      this.#failure = error instanceof Error ? error : new Error(String(error));
      this.#running = false;
    });
  }

  /**
   * A hint that a new object exists: probe now instead of after the idle wait. `through`: the
   * leader's durable end, every object of its stream up to it durable (ST4).
   */
  hint(through?: TailPosition): void {
    if (through !== undefined) this.#hintedThrough = furthest(this.#hintedThrough, through);
    this.#idleWaitMs = this.config.pollIntervalMs;
    if (this.#wake !== null) this.#wake();
    else this.#hinted = true; // busy now: the next wait returns at once
  }

  /** Objects fetched ahead are forgotten (read again when due): what the reader wants changed. */
  dropFetchedAhead(): void {
    this.#prefetched.clear();
  }

  /** Stops after the object being applied; resolves once the loop has. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#wake?.();
    await this.#loop;
  }

  async #run(): Promise<void> {
    while (this.#running) {
      let outcome: Outcome;
      try {
        outcome = await this.#step();
        this.#failures = 0;
      } catch (error) {
        await this.#failed(error);
        continue;
      }
      if (outcome === 'data') {
        // Let the rest of the process run between objects: catching up applies many in a row
        // (measured: event-loop stalls of up to 1 s without this).
        await yieldTurn(this.#clock);
      } else if (outcome === 'idle') {
        await this.#idle();
      }
    }
  }

  /** ST3: the user hears of it (or rethrows: the tail stops), then the step is tried again after a wait. */
  async #failed(error: unknown): Promise<void> {
    const applying = this.#applying;
    this.#applying = false;
    this.#prefetched.clear();
    const { retry } = this.config;
    const waitMs = retry === undefined ? this.#idleWaitMs : backoffDelayMs(retry, this.#failures, this.#random!);
    this.#failures++;
    this.#user.stepFailed(error, { applying, failures: this.#failures, waitMs });
    if (retry === undefined) await this.#idle();
    else await this.#wait(waitMs);
  }

  /** Reads the next object: applies its frames, moves on at a seal, or finds it absent. */
  async #step(): Promise<Outcome> {
    if (this.#position === null && !(await this.#begin())) return 'idle';
    await this.#user.beforeRead?.();
    const position = this.#position!;
    if (this.#pastHintedEnd(position)) return 'idle';
    const fetchedAhead = this.#prefetched.has(position.sequence);
    let read: ObjectRead;
    try {
      read = await this.#next(position);
    } catch (error) {
      this.#stats.readFailures++; // the reader already retried with backoff: wait, never skip the object
      throw error;
    }
    if (!this.#running || this.#position !== position) return 'idle';
    if (read.kind === 'data') {
      await this.#apply(position, read);
      return 'data';
    }
    if (read.kind === 'seal') return this.#sealed(position);
    return this.#absent(position, fetchedAhead);
  }

  /** The first stream: the one given at construction, or the user's; false while there is none. */
  async #begin(): Promise<boolean> {
    const start = this.#pendingStart ?? (await this.#user.next(null));
    if (start === null) return false;
    await this.#moveTo(start); // if its LIST fails, the same start is tried again (ST3)
    this.#pendingStart = null;
    return true;
  }

  /** ST1: a start without a sequence is the stream's floor by one LIST (0 for an empty stream). */
  async #moveTo(start: TailStart): Promise<void> {
    this.#prefetched.clear();
    this.#prefetchWindow = 1;
    this.#absentSinceMs = null;
    this.#behindSinceMs = null;
    if (start.sequence !== null) {
      this.#placeAt(start.stream, start.sequence);
      return;
    }
    const listed = await listSequences(this.#reader.store, this.#reader.config.prefix, start.stream);
    const floor = floorOf(listed);
    this.#position = { stream: start.stream, sequence: floor };
    this.#verifyAt = listed.size > 0 ? floor : null;
  }

  /** ST1: a sequence no LIST just saw present is compared with the floor at once if found absent. */
  #placeAt(stream: StreamId, sequence: number): void {
    this.#position = { stream, sequence };
    this.#verifyAt = sequence;
  }

  /**
   * ST4: `position` lies past the durable end the leader's hints named in its stream: the object is
   * not there yet, and a GET would be a billed 404 (two in three of a follower's GETs at 10 MB/s,
   * issue 28). The tail waits for the next hint instead, once: hints may stop (a fenced leader, a
   * new stream, a lost link), so after one idle wait without one it probes as before.
   */
  #pastHintedEnd(position: TailPosition): boolean {
    const through = this.#hintedThrough;
    if (through === null || !sameStream(through.stream, position.stream) || position.sequence <= through.sequence || this.#prefetched.has(position.sequence)) return false;
    if (this.#skippedProbe) {
      this.#skippedProbe = false;
      return false;
    }
    this.#skippedProbe = true;
    return true;
  }

  /** The object at `position`, with the following ones requested ahead while catching up, never past the hinted durable end (ST4). */
  #next(position: TailPosition): Promise<ObjectRead> {
    const through = this.#hintedThrough;
    // Past the hinted end (a probe after a wait with no hint), the object at the position alone.
    const hintedEnd = through !== null && sameStream(through.stream, position.stream) ? Math.max(through.sequence, position.sequence) + 1 : Number.POSITIVE_INFINITY;
    const end = Math.min(position.sequence + this.#prefetchWindow, hintedEnd);
    for (let sequence = position.sequence; sequence < end; sequence++) {
      if (this.#prefetched.has(sequence)) continue;
      const pending = this.#reader.read(position.stream, sequence);
      pending.catch(() => {}); // a read fetched ahead may fail unobserved; it is awaited (and rethrows) in turn
      this.#prefetched.set(sequence, pending);
    }
    const read = this.#prefetched.get(position.sequence)!;
    this.#prefetched.delete(position.sequence);
    return read;
  }

  /** Applies the frames of one object in order, then moves past it. A retry after a failure part-way re-applies nothing: applyFrame skips what a log has. */
  async #apply(position: TailPosition, read: DataRead): Promise<void> {
    const appliedBefore = this.#stats.bytesApplied;
    this.#applying = true;
    for (const frame of read.frames) await this.#applyFrame(frame, position.sequence, read.header.createdMs);
    this.#applying = false;
    this.#skippedProbe = false;
    this.#stats.objectsApplied++;
    this.#stats.bytesRead += read.bytesRead;
    this.#position = { stream: position.stream, sequence: position.sequence + 1 };
    this.#verifyAt = null;
    this.#absentSinceMs = null;
    this.#behindSinceMs = null;
    this.#idleWaitMs = this.config.pollIntervalMs;
    if (!this.#askedAfterWait) this.#prefetchWindow = Math.min(this.config.prefetchObjectsMax, this.#prefetchWindow * 2);
    this.#askedAfterWait = false;
    await this.#user.objectApplied?.(read, this.#stats.bytesApplied - appliedBefore);
  }

  async #applyFrame(frame: ReadFrame, sequence: number, createdMs: number): Promise<void> {
    const member = await this.#user.memberOf(frame);
    if (member === null) return;
    const { entry } = frame;
    if (entry.topicId === member.topicId && entry.baseOffset > member.log.logEndOffset && (await this.#user.beyondLogEnd(member, frame, sequence)) === 'skip') return;
    let bytes: number;
    try {
      bytes = applyFrame(member.log, frame, member.topicId);
    } catch (error) {
      if (this.#user.applyFailed === undefined) throw error;
      this.#user.applyFailed(member, sequence, error);
      return;
    }
    if (bytes === 0) return; // another incarnation's, or applied before (a restart, a retry)
    this.#stats.framesApplied++;
    this.#stats.bytesApplied += bytes;
    this.#user.applied(member, createdMs);
  }

  /** A seal: on to the stream the user names next, at once; none yet: poll again. */
  async #sealed(position: TailPosition): Promise<Outcome> {
    const next = await this.#user.next(position.stream);
    if (next === null || !this.#running || this.#position !== position) return 'idle';
    await this.#moveTo(next);
    return 'again';
  }

  /**
   * Not written yet, normally; ST2 the floor is compared when due. What was fetched ahead is
   * forgotten (absent too, or still in flight); an answer fetched ahead may be stale (the object
   * landed since), so it is asked again at once before waiting.
   */
  async #absent(position: TailPosition, fetchedAhead: boolean): Promise<Outcome> {
    if (this.#floorCheckDue(position.sequence) && (await this.#movedPastFloor(position))) return 'again';
    this.#stats.polls++;
    this.#prefetchWindow = 1;
    this.#prefetched.clear();
    return fetchedAhead ? 'again' : 'idle';
  }

  /**
   * ST1, ST2: at once for an unverified start; after `floorCheckBehindMs` while a member lags its
   * leader; after `floorCheckIdleMs` otherwise (with min.insync.replicas = RF the leader's high
   * watermark waits for this follower, so it never looks behind). Once per delay, not per probe.
   */
  #floorCheckDue(sequence: number): boolean {
    if (sequence === this.#verifyAt) {
      this.#verifyAt = null;
      return true;
    }
    const nowMs = this.#clock.monotonicMs();
    this.#absentSinceMs ??= nowMs;
    if (this.#user.anyBehindLeader?.() === true) {
      this.#behindSinceMs ??= nowMs;
      if (nowMs - this.#behindSinceMs < this.config.floorCheckBehindMs) return false;
      this.#behindSinceMs = nowMs; // the next check, if still behind, a delay from now
      return true;
    }
    this.#behindSinceMs = null;
    if (nowMs - this.#absentSinceMs < this.config.floorCheckIdleMs) return false;
    this.#absentSinceMs = nowMs; // the next idle check a delay from now
    return true;
  }

  /** [D4] One LIST: a floor above the position (or nothing left) means GC took it; the user says where to go on. */
  async #movedPastFloor(position: TailPosition): Promise<boolean> {
    const listed = await listSequences(this.#reader.store, this.#reader.config.prefix, position.stream);
    if (!this.#running || this.#position !== position) return false;
    const floor = listed.size === 0 ? null : floorOf(listed);
    if (floor !== null && floor <= position.sequence) return false;
    const next = await this.#user.floorPassed(position, floor);
    if (next === null || !this.#running || this.#position !== position) return false;
    this.#stats.floorSkips++;
    await this.#moveTo(next);
    return true;
  }

  /** Waits the idle interval (or for a hint), which then doubles up to pollIntervalMaxMs. */
  #idle(): Promise<void> {
    const waitMs = this.#idleWaitMs;
    this.#idleWaitMs = Math.min(this.config.pollIntervalMaxMs, this.#idleWaitMs * 2);
    return this.#wait(waitMs);
  }

  /** Waits `waitMs`, or until a hint or stop, whichever comes first. */
  #wait(waitMs: number): Promise<void> {
    this.#askedAfterWait = true;
    if (this.#hinted || !this.#running) {
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
      timer = this.#clock.setTimer(waitMs, done);
    });
  }
}

/** The further of two hinted durable ends: a later sequence of one stream, or a hint of another stream (a new epoch) outright. */
function furthest(known: TailPosition | null, hinted: TailPosition): TailPosition {
  return known !== null && sameStream(known.stream, hinted.stream) && known.sequence >= hinted.sequence ? known : hinted;
}
