import type { Ferry } from '../engine/index.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import type { TierStart } from '../tier/tier-start.ts';
import { assert } from '../util/assert.ts';
import type { Clock } from '../util/clock.ts';
import { type Random, SeededRandom } from '../util/random.ts';
import type { Network } from '../util/network.ts';
import type { ObjectStore } from '../store/object-store.ts';
import type { StreamId } from '../wal/keys.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../wal/reader.ts';
import { ensureSealed } from '../wal/seal.ts';
import type { MetricsRegistry } from '../metrics/index.ts';
import type { Uuid } from '../util/uuid.ts';
import { regressed } from '../util/regressions.ts';
import { LeaderProgress } from './leader-progress.ts';
import type { BrokerRecord, PartitionRecord } from './node.ts';
import { rebuildFromChain } from './rebuild.ts';
import { keepOnlyWhatTheChainProves } from './kept-log.ts';
import { StreamTails } from './stream-tails.ts';
import type { ClaimPlan } from './takeover.ts';

/**
 * How often a follower partition probes the leader's stream for its next object: 5 ms while data
 * flows, backing off to 50 ms while the stream is idle. A probe of a missing object is a billed
 * GET (200/s at 5 ms, 20/s at 50 ms); the cost is up to 50 ms more acks=all latency with
 * min.insync.replicas > 1 after an idle spell.
 */
const REPLICA_POLL_INTERVAL_MS = 5;
const REPLICA_POLL_INTERVAL_MAX_MS = 50;

export interface PartitionHostOptions {
  readonly engine: Ferry;
  /** Where the WAL streams live. */
  readonly store: ObjectStore;
  readonly prefix: string;
  readonly nodeId: number;
  readonly clock: Clock;
  /** The partition's chain as its control record now has it (a follower moving past a seal). */
  readChain(topic: string, partition: number): Promise<readonly StreamId[]>;
  replicationFactor(topic: string): number;
  /** The partition's live leader as last scanned, to report a follower's progress to. */
  leaderOf(topic: string, partition: number): BrokerRecord | null;
  readonly metrics?: MetricsRegistry;
  /** Where followers' progress reports travel; the operating system's sockets by default. */
  readonly network?: Network;
  /** Jitters the retries of stream tails and rebuild reads; seeded by the node id by default (the simulation injects its own). */
  readonly random?: Random;
  log?(message: string): void;
}

/**
 * What a cluster broker does with the partitions the control records give it
 * (docs/cluster-protocol.md): adopt one it won [C4]-[C5], let go of one it lost [C6], follow and
 * unfollow one another broker leads (replication factor > 1), forget a deleted topic.
 */
export class PartitionHost {
  readonly #options: PartitionHostOptions;
  readonly #tails: StreamTails;
  /** Followers' progress reports, each to its partition's current leader [R1]. */
  readonly #progress: LeaderProgress;

  readonly #random: Random;

  constructor(options: PartitionHostOptions) {
    this.#options = options;
    this.#random = options.random ?? new SeededRandom(options.nodeId);
    this.#tails = new StreamTails({
      store: options.store,
      prefix: options.prefix,
      clock: options.clock,
      random: this.#random,
      pollIntervalMs: REPLICA_POLL_INTERVAL_MS,
      pollIntervalMaxMs: REPLICA_POLL_INTERVAL_MAX_MS,
      readChain: (topic, partition) => options.readChain(topic, partition),
      ...(options.log === undefined ? {} : { report: (message: string) => options.log!(message) }),
      ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    });
    this.#progress = new LeaderProgress({
      replicaId: options.nodeId,
      clock: options.clock,
      leaderOf: (topic, partition) => options.leaderOf(topic, partition),
      leaderHighWatermark: (topic, partition, highWatermark) => options.engine.noteLeaderHighWatermark(topic, partition, highWatermark),
      ...(options.network === undefined ? {} : { network: options.network }),
    });
  }

  /**
   * [C4]-[C5] After the compare-and-swap of `plan.next` [C3]: seal every other stream of the chain,
   * rebuild the local log from the chain in order, then serve at the plan's leader epoch (L2).
   * `promoted` (docs/tier-protocol.md [K3]): this broker followed the partition until now; its local
   * log is kept and the rebuild applies only what it lacks.
   */
  async adopt(topic: string, partition: number, partitions: number, plan: ClaimPlan, promoted = false): Promise<void> {
    const { engine, store, prefix, clock } = this.#options;
    assert(!engine.serves(topic, partition), `${topic}-${partition} is adopted while still served here`);
    const current = plan.next.chain.at(-1)!;
    for (const stream of plan.seal) await ensureSealed(store, prefix, stream, { writerId: current.writerId, nowMs: clock.nowMs() }); // [C4]
    const { topicId } = plan.next;
    const reader = this.#reader(topic, partition, topicId);
    // The rebuild's appends rebuild the producer state too (src/log/producer-state.ts).
    await engine.adoptPartition(topic, topicId, partition, partitions, (log) => this.#rebuild(log, topic, partition, topicId, reader, plan.rebuildFrom, promoted), 'leader', this.#options.replicationFactor(topic), plan.next.leaderEpoch, promoted); // [C5]
    this.#options.log?.(`serving ${topic}-${partition} up to offset ${engine.offsetFor(topic, partition, -1).offset} (leader epoch ${plan.next.leaderEpoch})`);
  }

  /** [C6] Another broker leads it now. */
  async release(topic: string, partition: number): Promise<void> {
    await this.#options.engine.releasePartition(topic, partition);
  }

  /** Replication factor > 1: rebuild from the sealed streams, then tail the leader's. */
  async follow(topic: string, partition: number, partitions: number, record: PartitionRecord): Promise<void> {
    const { topicId } = record;
    const reader = this.#reader(topic, partition, topicId);
    const sealed = record.chain.slice(0, -1); // the leader sealed them when it took over
    const follower = await this.#options.engine.adoptPartition(topic, topicId, partition, partitions, (log) => this.#rebuild(log, topic, partition, topicId, reader, sealed), 'follower', 1, record.leaderEpoch);
    this.#progress.follow(topic, partition, () => follower.log.logEndOffset, () => follower.leaderEpoch); // reports what the rebuild brought, in the epoch followed
    const applied = () => {
      follower.noteApplied();
      this.#progress.applied(topic, partition);
    };
    this.#tails.follow({ topic, topicId, partition, log: follower.log, applied }, record.chain);
  }

  async unfollow(topic: string, partition: number): Promise<void> {
    this.#stopFollowing(topic, partition);
    await this.#options.engine.releasePartition(topic, partition);
  }

  /** A deleted topic: stop following its partitions and drop its logs. */
  async forget(topic: string): Promise<void> {
    for (const partition of this.#progress.unfollowTopic(topic)) this.#tails.unfollow(topic, partition);
    // Unknown: nothing of it was served here. Any other failure (a full disk kept the registry from
    // recording the delete) has closed its partitions all the same (Ferry.deleteTopic).
    await this.#options.engine.deleteTopic(topic).catch(() => {});
  }

  /** After each scan: followers re-target their reports to the partitions' current leaders [R1]. */
  scanned(): void {
    this.#progress.retarget();
  }

  stop(): void {
    this.#tails.stopAll();
    this.#progress.close();
  }

  #stopFollowing(topic: string, partition: number): void {
    this.#tails.unfollow(topic, partition);
    this.#progress.unfollow(topic, partition);
  }

  /**
   * [C5] with docs/tier-protocol.md [K2]: the log starts at the tier's end, with the tier's leader
   * epochs and producer state there, and takes from the chain only the frames from there on.
   */
  async #rebuild(log: PartitionLog, topic: string, partition: number, topicId: Uuid, reader: WalReader, chain: readonly StreamId[], kept = false): Promise<void> {
    let start: TierStart | null = null;
    try {
      start = await this.#options.engine.tierStartOf(topicId, partition);
    } catch (error) {
      // The tier cannot be read now: every WAL object is still there (nothing collects them yet),
      // so the chain rebuilds the log, more slowly, rather than leaving the partition unled; from
      // the start retention left in the tier record, never below (those records are gone for good).
      start = { offset: await this.#options.engine.tierLogStartOf(topicId, partition), epochs: [], producers: null };
      this.#options.log?.(`rebuilding ${topic}-${partition} from its chain at offset ${start.offset}: the tier cannot be read (${error instanceof Error ? error.message : String(error)})`);
    }
    if (start?.offset === 0) start = null;
    // [K3] A kept log that reaches the tier's end needs only the chain's frames past its own end.
    const keep = kept && log.logEndOffset >= (start?.offset ?? 0);
    if (kept) this.#options.log?.(keep ? `${topic}-${partition}: promoted follower keeps its local log [${log.logStartOffset}, ${log.logEndOffset})` : `${topic}-${partition}: the promoted follower's log ends at ${log.logEndOffset}, below the tier's end: rebuilt`);
    if (start !== null && !keep) {
      log.startAt(start.offset, start.epochs, start.producers);
      this.#options.log?.(`rebuilding ${topic}-${partition} from the tier's end, offset ${start.offset}`);
    }
    let chainEnd = start?.offset ?? 0; // what the chain proves: the tier, then each frame read
    const keptEnd = log.logEndOffset;
    const { bytesApplied } = await rebuildFromChain(reader, log, chain, topicId, (frame) => (chainEnd = Math.max(chainEnd, frame.entry.lastOffset + 1)));
    if (!keep) return;
    this.#options.log?.(`${topic}-${partition}: applied ${bytesApplied} bytes past the kept end ${keptEnd}, up to ${log.logEndOffset}`);
    keepOnlyWhatTheChainProves(log, chainEnd, (message) => this.#options.log?.(`${topic}-${partition}: ${message}`));
  }

  /** Reads the partition's frames of incarnation `topicId` only (DESIGN.md contract 10). */
  #reader(topic: string, partition: number, topicId: Uuid): WalReader {
    const { store, prefix, clock } = this.#options;
    return new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix, wants: (t, p, id) => t === topic && p === partition && (id === topicId || regressed('topic-incarnations-mixed')) }, { clock, random: this.#random });
  }
}
