import type { Ferry } from '../engine/index.ts';
import { assert } from '../util/assert.ts';
import type { Clock } from '../util/clock.ts';
import { SeededRandom } from '../util/random.ts';
import type { ObjectStore } from '../store/object-store.ts';
import type { StreamId } from '../wal/keys.ts';
import { DEFAULT_WAL_READER_CONFIG, type ReadFrame, WalReader } from '../wal/reader.ts';
import { ensureSealed } from '../wal/seal.ts';
import type { BrokerRecord, PartitionRecord } from './node.ts';
import { ProgressReporter } from './progress-reporter.ts';
import { rebuildFromChain } from './rebuild.ts';
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
  /** A live broker's record, to reach a partition's leader. */
  liveBroker(nodeId: number): BrokerRecord | undefined;
  /**
   * Each frame a leader's rebuild applied [C5], for state derived from the log that the engine
   * does not rebuild itself yet (the broker's producer sequences, until they live in the log).
   */
  rebuiltFrame?(topic: string, partition: number, frame: ReadFrame): void;
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
  readonly #reporters = new Map<string, ProgressReporter | null>();

  constructor(options: PartitionHostOptions) {
    this.#options = options;
    this.#tails = new StreamTails({
      store: options.store,
      prefix: options.prefix,
      clock: options.clock,
      random: new SeededRandom(options.nodeId),
      pollIntervalMs: REPLICA_POLL_INTERVAL_MS,
      pollIntervalMaxMs: REPLICA_POLL_INTERVAL_MAX_MS,
      readChain: (topic, partition) => options.readChain(topic, partition),
      ...(options.log === undefined ? {} : { report: (message: string) => options.log!(message) }),
    });
  }

  /**
   * [C4]-[C5] After the compare-and-swap of `plan.next` [C3]: seal every other stream of the chain,
   * rebuild the local log from the chain in order, then serve at the plan's leader epoch (L2).
   */
  async adopt(topic: string, partition: number, partitions: number, plan: ClaimPlan): Promise<void> {
    const { engine, store, prefix, clock } = this.#options;
    assert(!engine.serves(topic, partition), `${topic}-${partition} is adopted while still served here`);
    const current = plan.next.chain.at(-1)!;
    for (const stream of plan.seal) await ensureSealed(store, prefix, stream, { writerId: current.writerId, nowMs: clock.nowMs() }); // [C4]
    const reader = this.#reader(topic, partition);
    const rebuilt = this.#options.rebuiltFrame === undefined ? undefined : (frame: ReadFrame) => this.#options.rebuiltFrame!(topic, partition, frame);
    await engine.adoptPartition(topic, partition, partitions, async (log) => void (await rebuildFromChain(reader, log, plan.rebuildFrom, rebuilt)), 'leader', this.#options.replicationFactor(topic), plan.next.leaderEpoch); // [C5]
    this.#options.log?.(`serving ${topic}-${partition} up to offset ${engine.offsetFor(topic, partition, -1).offset} (leader epoch ${plan.next.leaderEpoch})`);
  }

  /** [C6] Another broker leads it now. */
  async release(topic: string, partition: number): Promise<void> {
    await this.#options.engine.releasePartition(topic, partition);
  }

  /** Replication factor > 1: rebuild from the sealed streams, then tail the leader's. */
  async follow(topic: string, partition: number, partitions: number, record: PartitionRecord): Promise<void> {
    const reader = this.#reader(topic, partition);
    const sealed = record.chain.slice(0, -1); // the leader sealed them when it took over
    const follower = await this.#options.engine.adoptPartition(topic, partition, partitions, async (log) => void (await rebuildFromChain(reader, log, sealed)), 'follower');
    const leaderBroker = this.#options.liveBroker(record.leader);
    const reporter = leaderBroker === undefined ? null : new ProgressReporter(this.#options.nodeId, leaderBroker.host, leaderBroker.port);
    const applied = () => {
      follower.noteApplied();
      reporter?.report(topic, partition, follower.log.logEndOffset);
    };
    applied(); // what the rebuild brought
    this.#reporters.set(`${topic}/${partition}`, reporter);
    this.#tails.follow({ topic, partition, log: follower.log, applied }, record.chain);
  }

  async unfollow(topic: string, partition: number): Promise<void> {
    this.#stopFollowing(topic, partition);
    await this.#options.engine.releasePartition(topic, partition);
  }

  /** A deleted topic: stop following its partitions and drop its logs. */
  async forget(topic: string): Promise<void> {
    for (const id of [...this.#reporters.keys()].filter((key) => key.startsWith(`${topic}/`))) this.#stopFollowing(topic, Number(id.slice(topic.length + 1)));
    await this.#options.engine.deleteTopic(topic).catch(() => {}); // nothing of it was served here
  }

  stop(): void {
    this.#tails.stopAll();
    for (const reporter of this.#reporters.values()) reporter?.close();
  }

  #stopFollowing(topic: string, partition: number): void {
    this.#tails.unfollow(topic, partition);
    this.#reporters.get(`${topic}/${partition}`)?.close();
    this.#reporters.delete(`${topic}/${partition}`);
  }

  #reader(topic: string, partition: number): WalReader {
    const { store, prefix, clock, nodeId } = this.#options;
    return new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix, wants: (t, p) => t === topic && p === partition }, { clock, random: new SeededRandom(nodeId) });
  }
}
