import { componentLogger, type Logger, type LoggerOption } from '../observability/logger.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import { applyFrame } from '../partition/apply.ts';
import { StreamTail, type StreamTailUser, type TailStart } from '../partition/stream-tail.ts';
import type { ObjectStore } from '../store/object-store.ts';
import type { MetricsRegistry } from '../metrics/index.ts';
import { type BackoffPolicy, backoffDelayMs } from '../util/backoff.ts';
import type { Clock } from '../util/clock.ts';
import type { Random } from '../util/random.ts';
import type { Uuid } from '../util/uuid.ts';
import { floorOf, listSequences } from '../wal/floor.ts';
import type { StreamId } from '../wal/keys.ts';
import { DEFAULT_WAL_READER_CONFIG, type ObjectRead, type ReadFrame, WalReader } from '../wal/reader.ts';

export interface FollowedPartition {
  readonly topic: string;
  /** The incarnation followed: frames of any other topic id under the same name are skipped. */
  readonly topicId: Uuid;
  readonly partition: number;
  readonly log: PartitionLog;
  /** After each applied frame: the follower's high watermark moves, the leader hears of it. */
  applied(): void;
  /** The leader's high watermark as last heard (its progress answers); null: not heard yet. How a member knows it is behind [D4]. */
  leaderHighWatermark?(): number | null;
}

export interface StreamTailsOptions {
  readonly store: ObjectStore;
  readonly prefix: string;
  readonly clock: Clock;
  readonly random: Random;
  /** Wait after finding nothing new; doubles while the stream stays idle, up to pollIntervalMaxMs. */
  readonly pollIntervalMs: number;
  readonly pollIntervalMaxMs: number;
  /** Objects fetched ahead while catching up; TAIL_PREFETCH_OBJECTS_MAX by default. */
  readonly prefetchObjectsMax?: number;
  /** The partition's chain as its control record now has it. */
  readChain(topic: string, partition: number): Promise<readonly StreamId[]>;
  readonly report?: LoggerOption;
  /** Where the tails count their failures (ferry_stream_tail_errors_total). */
  readonly metrics?: MetricsRegistry;
  /**
   * docs/tier-protocol.md [D4]: the partition's next WAL object is below its stream's floor (GC
   * took it: the follower was out of the ISR, or the stream was sealed and collected). It has left
   * its tail; the host re-follows it from scratch (a rebuild from the tier's end and the floors).
   * Without this, the partition is retried alone (T1), never admitted with a gap.
   */
  fellBehindFloor?(topic: string, partition: number): void;
}

/**
 * [D4] How long a member of a tail that finds nothing new must stay behind the leader's high
 * watermark before the tail LISTs its stream once to compare the floor. A tail at the stream's end
 * is the normal case (each probe one GET); a follower trails the leader's high watermark for a poll
 * interval or two in steady state, so a floor check costs one LIST per this delay, only while a
 * member lags this long.
 */
export const FLOOR_CHECK_DELAY_MS = 2000;
/**
 * [D4] How long a tail may find nothing at one sequence, no member behind the leader's high
 * watermark, before it LISTs its stream all the same. With min.insync.replicas = RF the high
 * watermark waits for this follower, so it never looks behind: objects GC took at the tail's
 * position (frames of other partitions, or of a deleted incarnation) would stop it for good, and
 * acks=all with it. Below the simulation's resume bound (9.6 s): at 30 s, seed 179's follower,
 * whose next objects GC took once a 10 s tail tiered them, found out 11 s later, acks=all timing out meanwhile. One
 * LIST per idle tail per this delay: 518,400 LISTs a month, about $0.59 at S3 Express prices
 * ($0.00113 per 1,000).
 */
export const FLOOR_CHECK_IDLE_MS = 5_000;

/**
 * A tail that fails (a GET of the stream, the chain's control record, a frame that does not fit
 * the log) waits with full jitter from 100 ms doubling up to 5 s and tries again from where it
 * was, so one bad moment of the store never ends replication. A longer cap probes a broken store
 * less; a shorter one reacts sooner when it heals.
 */
export const TAIL_RETRY: BackoffPolicy = { attempts: Number.POSITIVE_INFINITY, baseMs: 100, capMs: 5000 };

/** Objects a tail fetches ahead while catching up (each up to a WAL object's size in memory, per leader stream followed); 1 at the tail. */
export const TAIL_PREFETCH_OBJECTS_MAX = 8;
/**
 * A joiner's catch-up reads this many objects ahead. The tail and every member wait for their
 * joiners, so one read at a time from the floor stalled them: sim seed 630391, a follower joining
 * 559 objects behind held its tail (and acks=all of the partitions it followed, their follower
 * still in sync) for 3 s, then 7 s for the next joiner.
 */
export const CATCH_UP_READS_AHEAD = 16;

/** A partition waiting to join a tail: it first reads, alone, the tail's objects from `fromSequence` up to the tail's position. */
interface Joining {
  readonly partition: FollowedPartition;
  /** Null: from the stream's floor, found by a LIST when it is first tried. */
  fromSequence: number | null;
  /** Monotonic ms before which it is not tried (after a failure of its own); 0: at once. */
  retryAtMs: number;
  /** Its own failures in a row: its backoff (TAIL_RETRY), apart from the tail's. */
  failures: number;
}

interface Tail {
  readonly stream: StreamId;
  /** The loop reading the stream (src/partition/stream-tail.ts), from the stream's floor; set once, as the tail is made. */
  loop: StreamTail<FollowedPartition>;
  readonly members: Map<string, FollowedPartition>;
  /**
   * Partitions waiting to join: caught up on sequences below the tail's position first, between
   * reads. A member whose frame fails to apply comes back here alone (T1), so one partition's fault
   * never stops the others of the stream.
   */
  readonly joining: Joining[];
}

/**
 * The follower side of replication factor > 1 in a cluster: one StreamTail per leader stream,
 * fanning its objects out to every partition this broker follows from it, so a leader's objects
 * are read once per following broker, not once per followed partition. A partition joins a tail
 * after reading, alone, the tail's earlier objects; at a seal it moves to the stream its chain
 * names next (a new leader).
 * - T1 A partition's own fault (a frame its log cannot take, a failed catch-up) takes only that
 *   partition off the tail: it joins again after its own backoff from the object it failed on,
 *   while the tail goes on feeding the others. A fault of the tail's read fails the whole step.
 * - T2 (docs/tier-protocol.md [D4]) A tail and a joiner start at the stream's WAL floor. A
 *   partition whose next object is below the floor (WAL GC took it) leaves the tail for good and
 *   is handed to `fellBehindFloor`: it is never admitted with a gap, nor left waiting at an
 *   object that will never come.
 */
export class StreamTails {
  readonly #options: StreamTailsOptions;
  readonly #log: Logger;
  readonly #tails = new Map<string, Tail>();
  readonly #errors: { add(): void } | null;
  /** Stopped for good (the broker stopped): a follow still in flight when it stopped starts no tail. */
  #stopped = false;

  constructor(options: StreamTailsOptions) {
    this.#options = options;
    this.#log = componentLogger(options.report, 'follower');
    this.#errors = options.metrics?.counter('ferry_stream_tail_errors_total', 'Failed steps of the follower stream tails (each retried with backoff)') ?? null;
  }

  /** Starts following a partition in the leader stream that ends its chain (it was rebuilt from the earlier ones). */
  follow(partition: FollowedPartition, chain: readonly StreamId[]): void {
    this.#join(chain.at(-1)!, partition);
  }

  unfollow(topic: string, partition: number): void {
    const id = memberKey(topic, partition);
    for (const tail of this.#tails.values()) {
      tail.members.delete(id);
      const at = tail.joining.findIndex(({ partition: p }) => memberKey(p.topic, p.partition) === id);
      if (at >= 0) tail.joining.splice(at, 1);
      this.#stopIfEmpty(tail);
    }
  }

  stopAll(): void {
    this.#stopped = true;
    for (const tail of this.#tails.values()) this.#stop(tail);
  }

  #join(stream: StreamId, partition: FollowedPartition): void {
    if (this.#stopped) return;
    const key = streamKey(stream);
    let tail = this.#tails.get(key);
    if (tail === undefined) {
      tail = this.#newTail(stream);
      this.#tails.set(key, tail);
      tail.loop.start();
    }
    tail.joining.push({ partition, fromSequence: null, retryAtMs: 0, failures: 0 });
  }

  #newTail(stream: StreamId): Tail {
    const { clock, random, pollIntervalMs, pollIntervalMaxMs } = this.#options;
    const members = new Map<string, FollowedPartition>();
    const reader = this.#reader((topic, partition, topicId) => members.get(memberKey(topic, partition))?.topicId === topicId);
    const config = {
      pollIntervalMs,
      pollIntervalMaxMs,
      prefetchObjectsMax: this.#options.prefetchObjectsMax ?? TAIL_PREFETCH_OBJECTS_MAX,
      floorCheckIdleMs: FLOOR_CHECK_IDLE_MS,
      floorCheckBehindMs: FLOOR_CHECK_DELAY_MS,
      retry: TAIL_RETRY,
    };
    const tail = { stream, members, joining: [] } as Omit<Tail, 'loop'> as Tail;
    tail.loop = new StreamTail(reader, this.#tailUser(tail), config, { clock, random, start: { stream, sequence: null } }); // from its floor [G4]
    return tail;
  }

  /** What the cluster decides for one tail's loop: its members, T1 and T2, the chains at a seal. */
  #tailUser(tail: Tail): StreamTailUser<FollowedPartition> {
    return {
      memberOf: (frame) => tail.members.get(memberKey(frame.entry.topic, frame.entry.partition)) ?? null,
      beyondLogEnd: (member, frame, sequence) => {
        this.#fellBehind(tail, member, `its log ends at ${member.log.logEndOffset} and object ${sequence} continues at ${frame.entry.baseOffset}`);
        return 'skip';
      },
      applyFailed: (member, sequence, error) => {
        // T1: this partition alone leaves the tail, and catches up from this object after its own backoff.
        tail.members.delete(memberKey(member.topic, member.partition));
        this.#retryLater(tail, { partition: member, fromSequence: sequence, retryAtMs: 0, failures: 0 }, error);
      },
      applied: (member) => member.applied(),
      next: async (from) => {
        if (from !== null) await this.#moveOnFromSeal(tail);
        return null; // members move one by one, each by its own chain
      },
      floorPassed: (position, floor) => this.#floorPassed(tail, position.sequence, floor),
      beforeRead: () => this.#admitJoining(tail),
      anyBehindLeader: () => [...tail.members.values()].some(isBehindLeader),
      stepFailed: (error, { failures, waitMs }) => {
        this.#errors?.add();
        this.#log.warn(
          { stream: streamKey(tail.stream), failures, err: error },
          `tail of ${streamKey(tail.stream)} failed (${failures} in a row), retrying in ${Math.round(waitMs)} ms: ${error instanceof Error ? error.message : String(error)}`,
        );
      },
    };
  }

  #stop(tail: Tail): void {
    void tail.loop.stop();
    this.#tails.delete(streamKey(tail.stream));
  }

  #stopIfEmpty(tail: Tail): void {
    if (tail.members.size === 0 && tail.joining.length === 0) this.#stop(tail);
  }

  /**
   * [D4] A floor above the tail's position: GC took its next object, so every member has fallen
   * behind it and leaves the tail, which moves to the floor. An empty stream has had nothing
   * written yet (GC keeps a stream's highest object, and seals stay): nobody fell behind.
   */
  #floorPassed(tail: Tail, sequence: number, floor: number | null): TailStart | null {
    if (floor === null) return null;
    for (const member of [...tail.members.values()]) this.#fellBehind(tail, member, `object ${sequence} is gone (the floor is ${floor})`);
    return { stream: tail.stream, sequence: floor };
  }

  /** [D4] `member` leaves the tail for good; the host re-follows it from scratch (or, without a host, it is retried alone, T1). */
  #fellBehind(tail: Tail, member: FollowedPartition, why: string): void {
    tail.members.delete(memberKey(member.topic, member.partition));
    const { fellBehindFloor } = this.#options;
    const message = `${member.topic}-${member.partition} fell behind the WAL floor of ${streamKey(tail.stream)}: ${why}`;
    if (fellBehindFloor === undefined) {
      this.#retryLater(tail, { partition: member, fromSequence: null, retryAtMs: 0, failures: 0 }, new Error(message));
      return;
    }
    this.#log.warn({ topic: member.topic, partition: member.partition, stream: streamKey(tail.stream) }, `${message}; following it again from the tier's end`);
    this.#stopIfEmpty(tail);
    fellBehindFloor(member.topic, member.partition);
  }

  #floor(stream: StreamId): Promise<number> {
    return listSequences(this.#options.store, this.#options.prefix, stream).then(floorOf);
  }

  /**
   * Catches each joining partition that is due up on the objects the tail has already passed, then
   * admits it. A joiner whose catch-up fails waits for its own retry (T1); the others go on.
   */
  async #admitJoining(tail: Tail): Promise<void> {
    const nowMs = this.#options.clock.monotonicMs();
    for (const joining of tail.joining.filter((j) => j.retryAtMs <= nowMs)) {
      const { partition } = joining;
      const reader = this.#reader((topic, index, topicId) => topic === partition.topic && index === partition.partition && topicId === partition.topicId);
      let gone: string | null;
      try {
        gone = await this.#catchUp(tail, joining, reader);
      } catch (error) {
        const at = tail.joining.indexOf(joining);
        if (at < 0) continue; // unfollowed meanwhile
        tail.joining.splice(at, 1);
        this.#retryLater(tail, joining, error);
        continue;
      }
      const at = tail.joining.indexOf(joining);
      if (at < 0) continue; // unfollowed meanwhile
      tail.joining.splice(at, 1);
      tail.members.set(memberKey(partition.topic, partition.partition), partition);
      tail.loop.dropFetchedAhead(); // read before it joined, they lack its frames (the reader fetches only members')
      if (gone !== null) this.#fellBehind(tail, partition, gone); // never admitted with a gap [D4]
    }
  }

  /**
   * Reads, for one joiner alone, the objects from its start (the floor, when it has none yet) up to
   * the tail's position. Returns null once caught up, or why it cannot be: an object it needs is
   * below the floor now [D4] (a catch-up read finds it absent and a LIST finds the floor above it),
   * or a frame would leave a gap in its log (GC took frames past the tier's end it started from).
   */
  async #catchUp(tail: Tail, joining: Joining, reader: WalReader): Promise<string | null> {
    const { partition } = joining;
    joining.fromSequence ??= await this.#floor(tail.stream);
    const ahead = new Map<number, Promise<ObjectRead>>();
    for (; joining.fromSequence < tail.loop.position!.sequence; joining.fromSequence++) {
      const end = Math.min(tail.loop.position!.sequence, joining.fromSequence + CATCH_UP_READS_AHEAD);
      for (let sequence = joining.fromSequence; sequence < end; sequence++) {
        if (ahead.has(sequence)) continue;
        const pending = reader.read(tail.stream, sequence);
        pending.catch(() => {}); // one read ahead may fail unobserved: it is awaited (and rethrows) in turn
        ahead.set(sequence, pending);
      }
      const read = await ahead.get(joining.fromSequence)!;
      ahead.delete(joining.fromSequence);
      if (read.kind === 'absent') {
        const floor = await this.#floor(tail.stream);
        if (floor > joining.fromSequence) return `its catch-up object ${joining.fromSequence} is gone (the floor is ${floor})`;
        throw new Error(`object ${joining.fromSequence} of ${streamKey(tail.stream)} is missing below the tail's position ${tail.loop.position!.sequence} and above the floor ${floor}`);
      }
      if (read.kind === 'seal') throw new Error(`object ${joining.fromSequence} of ${streamKey(tail.stream)} is a seal below the tail's position ${tail.loop.position!.sequence}`);
      for (const frame of read.frames) {
        if (leavesGap(partition, frame)) return `its log ends at ${partition.log.logEndOffset} and object ${joining.fromSequence} continues at ${frame.entry.baseOffset}`;
        if (applyFrame(partition.log, frame, partition.topicId) > 0) partition.applied();
      }
    }
    return null;
  }

  /** T1: one partition failed on its own: logged, counted, and queued to join again after its backoff. */
  #retryLater(tail: Tail, joining: Joining, error: unknown): void {
    this.#errors?.add();
    const waitMs = backoffDelayMs(TAIL_RETRY, joining.failures++, this.#options.random);
    joining.retryAtMs = this.#options.clock.monotonicMs() + waitMs;
    tail.joining.push(joining);
    const { topic, partition } = joining.partition;
    this.#log.warn(
      { topic, partition, stream: streamKey(tail.stream), failures: joining.failures, err: error },
      `${topic}-${partition} failed on the tail of ${streamKey(tail.stream)} (${joining.failures} in a row), retrying it alone in ${Math.round(waitMs)} ms: ${error instanceof Error ? error.message : String(error)}`,
    );
  }

  /** The stream is sealed: each member moves to the next stream of its chain once one is recorded. */
  async #moveOnFromSeal(tail: Tail): Promise<void> {
    for (const [id, member] of tail.members) {
      const chain = await this.#options.readChain(member.topic, member.partition);
      if (!tail.loop.running || tail.members.get(id) !== member) continue; // let go of (unfollow, stopAll) during the read: it stays let go of
      const at = chain.findIndex((s) => streamKey(s) === streamKey(tail.stream));
      const next = at >= 0 ? chain[at + 1] : undefined;
      if (next === undefined) continue; // no successor recorded yet: ask again later
      tail.members.delete(id);
      this.#join(next, member);
    }
    this.#stopIfEmpty(tail);
  }

  #reader(wants: (topic: string, partition: number, topicId: Uuid) => boolean): WalReader {
    const { store, prefix, clock, random } = this.#options;
    return new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix, wants }, { clock, random });
  }
}

/** A frame of the member's incarnation that starts past its log's end: the offsets between are not in the WAL any more [D4]. */
function leavesGap(member: FollowedPartition, frame: ReadFrame): boolean {
  return frame.entry.topicId === member.topicId && frame.entry.baseOffset > member.log.logEndOffset;
}

/** The member's log ends below the leader's high watermark as last heard: records exist that it has not applied. */
function isBehindLeader(member: FollowedPartition): boolean {
  const highWatermark = member.leaderHighWatermark?.() ?? null;
  return highWatermark !== null && member.log.logEndOffset < highWatermark;
}

function streamKey(stream: StreamId): string {
  return `${stream.writerId}/${stream.epoch}`;
}

function memberKey(topic: string, partition: number): string {
  return `${topic}/${partition}`;
}
