import { FerryError } from '../errors.ts';
import type { RecordBatch } from '../format/record-batch.ts';
import { assert } from '../util/assert.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import { followerHighWatermark, leaderHighWatermark } from '../replica/high-watermark.ts';
import type { WalWriter } from '../wal/writer.ts';

/** Bytes of local log read per step when re-shipping an unshipped suffix. */
const RESHIP_READ_BYTES = 1024 * 1024;

/** Consecutive batches (views of one read buffer) split where the leader epoch changes: one frame each. */
function runsOfOneEpoch(batches: readonly RecordBatch[]): RecordBatch[][] {
  const runs: RecordBatch[][] = [];
  for (const batch of batches) {
    const run = runs.at(-1);
    if (run !== undefined && run[0]!.partitionLeaderEpoch === batch.partitionLeaderEpoch) run.push(batch);
    else runs.push([batch]);
  }
  return runs;
}

interface DataWaiter {
  readonly offset: number;
  readonly resolve: () => void;
}

export type PartitionRole = { readonly kind: 'leader'; readonly requiredFollowers: number } | { readonly kind: 'follower' };

/**
 * Whether the engine may acknowledge now: throws the reason when not (a cluster broker whose
 * lease may have lapsed, docs/cluster-protocol.md [C1]). The embedded engine always may.
 */
export type AcknowledgeGate = () => void;

export const ALWAYS_ACKNOWLEDGE: AcknowledgeGate = () => {};

/**
 * One partition of the embedded engine: its log plus the high watermark that consumers may read
 * up to. A reader never sees a record that a crash could take back:
 * - a leader's high watermark is what is durable (in WAL objects with a WAL, KIP-1176; synced
 *   by the flush policy without one) and applied by min.insync.replicas - 1 followers;
 * - a follower's is what it applied from durable WAL objects, capped by the leader's it knows.
 */
export class Partition {
  readonly topic: string;
  readonly index: number;
  readonly log: PartitionLog;
  readonly role: PartitionRole;
  /** The leader epoch its appends carry in their batch headers (design contract 13): the cluster's, 0 embedded. */
  readonly leaderEpoch: number;
  readonly #wal: WalWriter | null;
  readonly #gate: AcknowledgeGate;
  #durableEnd: number;
  readonly #followerEnds = new Map<string, number>();
  #leaderHighWatermark: number | null = null;
  #highWatermark: number;
  #waiters: DataWaiter[] = [];

  /** `durableEnd`: where the log is durable from before (the WAL's end for it, or the log end without a WAL). */
  /** `committedEnd`: where the high watermark may start (a partition rebuilt from sealed WAL streams is committed whole). */
  /** `leadership`: the leader epoch appends carry and the gate every acknowledgement passes. */
  constructor(topic: string, index: number, log: PartitionLog, wal: WalWriter | null, role: PartitionRole, durableEnd = log.logEndOffset, committedEnd?: number, leadership: { leaderEpoch: number; gate: AcknowledgeGate } = { leaderEpoch: 0, gate: ALWAYS_ACKNOWLEDGE }) {
    this.topic = topic;
    this.index = index;
    this.log = log;
    this.#wal = wal;
    this.role = role;
    this.leaderEpoch = leadership.leaderEpoch;
    this.#gate = leadership.gate;
    if (durableEnd > log.logEndOffset) {
      throw new FerryError('Storage', `${topic}-${index}: the local log ends at ${log.logEndOffset} but the WAL holds it up to ${durableEnd}; a single engine cannot rebuild its tail from object storage (a cluster broker rebuilds adopted partitions from their chain)`);
    }
    this.#durableEnd = durableEnd;
    const committed = committedEnd ?? (role.kind === 'leader' && role.requiredFollowers > 0 ? log.logStartOffset : durableEnd);
    this.#highWatermark = Math.max(log.logStartOffset, committed);
  }

  /**
   * A restarted leader's local suffix that its earlier WAL streams never got (appended, not yet
   * shipped when it stopped): shipped again in the new stream before any new append, so the
   * WAL has no gap a follower would stop at. Resolves once every frame is handed to the writer.
   */
  async reshipUnshipped(): Promise<number> {
    const wal = this.#wal;
    const end = this.log.logEndOffset;
    if (wal === null || this.#durableEnd >= end) return 0;
    let offset = this.#durableEnd;
    let durable: Promise<void> = Promise.resolve();
    while (offset < end) {
      const { batches } = this.log.read(offset, RESHIP_READ_BYTES);
      assert(batches[0]?.baseOffset === offset, `${this.topic}-${this.index}: the WAL ends at ${offset}, inside a local batch`);
      for (const run of runsOfOneEpoch(batches)) {
        const first = run[0]!;
        const last = run.at(-1)!;
        const data = new Uint8Array(first.bytes.buffer, first.bytes.byteOffset, last.bytes.byteOffset + last.bytes.length - first.bytes.byteOffset);
        await wal.reserve(data.length);
        durable = wal.append({ topic: this.topic, partition: this.index, leaderEpoch: first.partitionLeaderEpoch, baseOffset: first.baseOffset, lastOffset: last.lastOffset, data });
      }
      offset = batches.at(-1)!.nextOffset;
    }
    // The last frame's object is durable only with every lower sequence [W5]: so is the whole suffix.
    durable.then(() => {
      this.#durableEnd = Math.max(this.#durableEnd, end);
      this.#recompute();
    }, () => {}); // a failed writer fails every later produce too
    return end - this.#durableEnd;
  }

  get highWatermark(): number {
    return this.#highWatermark;
  }

  /**
   * Appends as leader at its leader epoch: waits for room in the WAL's upload buffer
   * (backpressure), appends to the local log, hands the same bytes to the WAL [W1], and returns
   * the offsets with a promise that resolves once the high watermark has passed them (acks=all)
   * and the gate still lets it acknowledge.
   */
  async append(records: Uint8Array): Promise<{ baseOffset: number; lastOffset: number; durable: Promise<void> }> {
    if (this.role.kind !== 'leader') throw new FerryError('NotLeader', `${this.topic}-${this.index} is a follower here; produce to its leader`);
    this.#gate();
    const wal = this.#wal;
    if (wal !== null) await wal.reserve(records.length);
    this.#gate(); // the wait for room may have outlasted the lease
    const leaderEpoch = this.leaderEpoch;
    const { baseOffset, lastOffset } = this.log.append(records, leaderEpoch);
    let durable: Promise<void>;
    if (wal === null) {
      durable = this.log.waitForFlush(lastOffset);
    } else {
      durable = wal.append({ topic: this.topic, partition: this.index, leaderEpoch, baseOffset, lastOffset, data: records }); // [W5] this frame's object
    }
    const committed = durable.then(async () => {
      this.#durableEnd = Math.max(this.#durableEnd, lastOffset + 1);
      this.#recompute();
      await this.waitForData(lastOffset);
      this.#gate(); // [C1] durable, but acknowledged only while the lease is surely held
    });
    return { baseOffset, lastOffset, durable: committed };
  }

  /** Leader: a follower reports it applied everything below `logEndOffset`. */
  noteFollowerApplied(followerId: string, logEndOffset: number): void {
    this.#followerEnds.set(followerId, Math.max(this.#followerEnds.get(followerId) ?? 0, logEndOffset));
    this.#recompute();
  }

  /** Follower: it applied more from the WAL, or learnt the leader's high watermark. */
  noteApplied(): void {
    this.#recompute();
  }

  noteLeaderHighWatermark(highWatermark: number): void {
    this.#leaderHighWatermark = Math.max(this.#leaderHighWatermark ?? 0, highWatermark);
    this.#recompute();
  }

  /** Follower: the leader's high watermark as last heard; null when not linked to a leader. */
  get leaderHighWatermark(): number | null {
    return this.#leaderHighWatermark;
  }

  /** Resolves when the high watermark passes `offset` (new data to read), or when `signal` aborts. */
  waitForData(offset: number, signal?: AbortSignal): Promise<void> {
    if (this.#highWatermark > offset || signal?.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const waiter = { offset, resolve };
      this.#waiters.push(waiter);
      signal?.addEventListener('abort', () => {
        this.#waiters = this.#waiters.filter((other) => other !== waiter);
        resolve();
      }, { once: true });
    });
  }

  /** Wakes every waiter; used at close, after which reads fail with Closed. */
  wakeAll(): void {
    for (const waiter of this.#waiters.splice(0)) waiter.resolve();
  }

  checkReadable(offset: number): void {
    if (offset > this.#highWatermark) {
      throw new FerryError('OffsetOutOfRange', `offset ${offset} is past the high watermark ${this.#highWatermark} of ${this.topic}-${this.index}`);
    }
  }

  #recompute(): void {
    const next = this.role.kind === 'leader'
      ? leaderHighWatermark(this.#durableEnd, this.#followerEnds.values(), this.role.requiredFollowers)
      : followerHighWatermark(this.log.logEndOffset, this.#leaderHighWatermark);
    if (next <= this.#highWatermark) return;
    this.#highWatermark = next;
    const still: DataWaiter[] = [];
    for (const waiter of this.#waiters) {
      if (waiter.offset < next) waiter.resolve();
      else still.push(waiter);
    }
    this.#waiters = still;
  }
}
