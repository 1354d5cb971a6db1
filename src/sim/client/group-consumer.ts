/**
 * A simulated consumer in a group, reacting to its coordinator's answers as Kafka's Java consumer
 * does (errors.ts, groupReaction): it finds the coordinator, joins (the leader deals the partitions
 * round-robin), syncs, reads each assigned partition's committed offset, fetches the assigned
 * partitions in turn, and heartbeats and commits its positions on the clock; every group request
 * is recorded (group-requests.ts). A generation ends on REBALANCE_IN_PROGRESS or
 * ILLEGAL_GENERATION (it joins again under its member id) and on UNKNOWN_MEMBER_ID (as a new
 * member). A coordinator that moved, is not available or did not answer is found again with the
 * generation kept: the generation may live on there, and if not, the next answer says so.
 * Given lapses (group-lapses.ts), it also stalls, turns zombie, commits under a stale generation
 * and leaves, now and then.
 */
import { ErrorCode } from '../../protocol/error-codes.ts';
import { BrokerPool } from './brokers.ts';
import { assignRoundRobin, decodeAssignment, encodeAssignment, encodeSubscription, type TopicPartitions } from './consumer-protocol.ts';
import { backoffMs, type ClientContext, type ClientOptions, clientContext, type SimClient, sleep } from './context.ts';
import { groupReaction } from './errors.ts';
import { type LapseOptions, type LapsingMember, runLapses } from './group-lapses.ts';
import { type Committer, GroupRequests, type OffsetToCommit, topicPartitionKey } from './group-requests.ts';
import { PartitionFetcher } from './partition-fetcher.ts';

export const SESSION_TIMEOUT_MS_DEFAULT = 10_000;
export const REBALANCE_TIMEOUT_MS_DEFAULT = 5_000;
export const HEARTBEAT_INTERVAL_MS_DEFAULT = 1_000;
export const COMMIT_INTERVAL_MS_DEFAULT = 1_000;
const PROTOCOL_TYPE = 'consumer';
const ASSIGNOR = 'roundrobin';

export interface GroupConsumerOptions extends ClientOptions {
  readonly group: string;
  readonly topics: readonly string[];
  readonly sessionTimeoutMs?: number;
  readonly rebalanceTimeoutMs?: number;
  readonly heartbeatIntervalMs?: number;
  readonly commitIntervalMs?: number;
  /** How long the broker may hold a Fetch with nothing to return. */
  readonly maxWaitMs?: number;
  /** Draws the member's lapses (group-lapses.ts); absent: it has none. */
  readonly lapses?: LapseOptions;
}

interface Generation extends Committer {
  readonly assigned: readonly TopicPartitions[];
  /** null until the assignment's committed offsets are read. */
  fetchers: PartitionFetcher[] | null;
}

/** A generation held past its end until `untilMs`: by a zombie (as if current), or for stale commits (beside the current one). */
interface HeldGeneration {
  readonly generation: Generation;
  readonly untilMs: number;
}

export class SimGroupConsumer implements SimClient, LapsingMember {
  readonly #context: ClientContext;
  readonly #pool: BrokerPool;
  readonly #requests: GroupRequests;
  readonly #options: GroupConsumerOptions;
  readonly sessionTimeoutMs: number;
  readonly #rebalanceTimeoutMs: number;
  readonly #heartbeatIntervalMs: number;
  #coordinator: number | null = null;
  #memberId = '';
  #generation: Generation | null = null;
  /** What each partition's last commit that succeeded stored. */
  readonly #committed = new Map<string, number>();
  #running = false;
  #loops: Promise<unknown> = Promise.resolve();
  /** A lapse waiting for the next answer that ends the generation. */
  #armed: { readonly kind: 'zombie' | 'stale-commits'; readonly ms: number } | null = null;
  #zombie: HeldGeneration | null = null;
  #stale: HeldGeneration | null = null;
  /** Set while the member stalls: every loop waits for it. */
  #stalled: { readonly over: Promise<void>; readonly resume: () => void } | null = null;
  /** After a leave: no join before this (clock ms). */
  #outUntilMs = 0;

  constructor(options: GroupConsumerOptions) {
    this.#context = clientContext(options);
    this.#pool = new BrokerPool(this.#context);
    this.#requests = new GroupRequests(this.#context, this.#pool, options.group);
    this.#options = options;
    this.sessionTimeoutMs = options.sessionTimeoutMs ?? SESSION_TIMEOUT_MS_DEFAULT;
    this.#rebalanceTimeoutMs = options.rebalanceTimeoutMs ?? REBALANCE_TIMEOUT_MS_DEFAULT;
    this.#heartbeatIntervalMs = options.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS_DEFAULT;
  }

  get name(): string {
    return this.#context.name;
  }

  get running(): boolean {
    return this.#running;
  }

  /** The partitions of the current generation (empty between generations, and until their committed offsets are read). */
  get assignment(): { topic: string; partition: number; position: number | null }[] {
    return (this.#generation?.fetchers ?? []).map((f) => ({ topic: f.topic, partition: f.partition, position: f.position }));
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loops = Promise.all([
      this.#run(),
      this.#every(this.#heartbeatIntervalMs, () => this.#heartbeat()),
      this.#every(this.#options.commitIntervalMs ?? COMMIT_INTERVAL_MS_DEFAULT, () => this.#commitAll()),
    ]);
    // Not awaited by stop: it only sleeps between lapses, and checks `running` when it wakes.
    if (this.#options.lapses !== undefined) void runLapses(this, this.#context.clock, this.#options.lapses);
  }

  /** Graceful: commits the positions and leaves the group. Otherwise just drops the connections (a crash). */
  async stop(graceful = true): Promise<void> {
    this.#running = false;
    this.#wake();
    const generation = this.#generation;
    const coordinator = this.#coordinator;
    if (graceful && generation !== null && coordinator !== null) {
      await this.#commitPositions(generation);
      await this.#requests.leave(coordinator, generation.memberId);
    }
    this.#generation = null;
    this.#pool.close();
    await this.#loops;
  }

  async stall(ms: number): Promise<void> {
    if (this.#stalled !== null) return;
    let resume!: () => void;
    const stalled = { over: new Promise<void>((resolve) => (resume = resolve)), resume };
    this.#stalled = stalled;
    await sleep(this.#context.clock, ms);
    if (this.#stalled !== stalled) return; // stopped meanwhile
    const generation = this.#generation;
    // Back as if nothing happened (an auto-commit of every position): only the answers tell otherwise.
    const committing = generation === null ? Promise.resolve() : this.#commitPositions(generation, true);
    this.#wake();
    await committing;
  }

  lapseAtNextRebalance(kind: 'zombie' | 'stale-commits', ms: number): void {
    this.#armed = { kind, ms };
  }

  async leave(outMs: number, commitAfter: boolean): Promise<void> {
    const generation = this.#generation;
    if (generation === null || generation.fetchers === null || this.#zombie !== null) return;
    await this.#commitPositions(generation);
    const coordinator = this.#coordinator;
    if (this.#generation !== generation || coordinator === null) return;
    this.#generation = null;
    this.#memberId = '';
    this.#outUntilMs = this.#context.clock.nowMs() + outMs;
    await this.#requests.leave(coordinator, generation.memberId);
    // A thread that still held the generation commits under it (the coordinator must refuse it).
    if (commitAfter) await this.#commitEvery(coordinator, generation);
  }

  async #every(intervalMs: number, task: () => Promise<void>): Promise<void> {
    while (this.#running) {
      await sleep(this.#context.clock, intervalMs);
      await this.#awake();
      if (this.#running) await task();
    }
  }

  async #run(): Promise<void> {
    while (this.#running) {
      await this.#awake();
      const generation = this.#generation;
      if (!this.#running) return;
      if (this.#coordinator === null) await this.#findCoordinator();
      else if (generation === null) await this.#joinWhenBack();
      else if (generation.fetchers === null) await this.#readCommitted(generation);
      else await this.#fetchRound(generation, generation.fetchers);
    }
  }

  /** Resolves once the member does not stall. */
  async #awake(): Promise<void> {
    while (this.#stalled !== null) await this.#stalled.over;
  }

  #wake(): void {
    const stalled = this.#stalled;
    this.#stalled = null;
    stalled?.resume();
  }

  async #fetchRound(generation: Generation, fetchers: readonly PartitionFetcher[]): Promise<void> {
    if (fetchers.length === 0) return sleep(this.#context.clock, this.#heartbeatIntervalMs);
    for (const fetcher of fetchers) {
      await this.#awake();
      if (this.#generation !== generation || !this.#running) return;
      await fetcher.step();
    }
  }

  async #findCoordinator(): Promise<void> {
    const coordinator = await this.#requests.findCoordinator();
    if (coordinator === null) return this.#backOff();
    this.#coordinator = coordinator;
  }

  async #joinWhenBack(): Promise<void> {
    const outMs = this.#outUntilMs - this.#context.clock.nowMs();
    if (outMs > 0) return sleep(this.#context.clock, outMs);
    return this.#join();
  }

  async #join(): Promise<void> {
    const coordinator = this.#coordinator!;
    const timeoutMs = this.#rebalanceTimeoutMs + this.#context.requestTimeoutMs; // a join and a sync wait for the whole rebalance
    const join = await this.#requests.join(
      coordinator,
      {
        memberId: this.#memberId,
        sessionTimeoutMs: this.sessionTimeoutMs,
        rebalanceTimeoutMs: this.#rebalanceTimeoutMs,
        protocolType: PROTOCOL_TYPE,
        protocols: [{ name: ASSIGNOR, metadata: encodeSubscription(this.#options.topics) }],
      },
      timeoutMs,
    );
    if (join === null) return this.#lostCoordinator(coordinator, true);
    if (join.errorCode === ErrorCode.MEMBER_ID_REQUIRED) return void (this.#memberId = join.memberId);
    if (join.errorCode !== ErrorCode.NONE) return this.#onJoinError(join.errorCode, coordinator);
    this.#memberId = join.memberId;
    const assignments = join.leader === join.memberId ? await this.#assign(join.members) : [];
    if (assignments === null) return this.#backOff();
    const member: Committer = { generationId: join.generationId, memberId: join.memberId };
    const sync = await this.#requests.sync(coordinator, member, assignments, timeoutMs);
    if (sync === null) return this.#lostCoordinator(coordinator, true);
    if (sync.errorCode !== ErrorCode.NONE) return this.#onJoinError(sync.errorCode, coordinator);
    if (this.#running && this.#generation === null) this.#generation = { ...member, assigned: decodeAssignment(sync.assignment), fetchers: null };
  }

  /** The leader's SyncGroup assignments; null when the topics' partition counts cannot be learned. */
  async #assign(memberIds: readonly string[]): Promise<{ memberId: string; assignment: Uint8Array }[] | null> {
    const metadata = await this.#pool.refreshMetadata(this.#options.topics);
    if (metadata === null) return null;
    const counts = new Map(
      this.#options.topics.flatMap((topic) => {
        const count = this.#pool.partitionCount(topic);
        return count === null ? [] : [[topic, count] as const];
      }),
    );
    return [...assignRoundRobin(memberIds, counts)].map(([memberId, assigned]) => ({ memberId, assignment: encodeAssignment(assigned) }));
  }

  /** OffsetFetch of the generation's partitions: its fetchers start there (none committed: from the earliest offset). */
  async #readCommitted(generation: Generation): Promise<void> {
    const coordinator = this.#coordinator!;
    if (generation.assigned.length === 0) return void (generation.fetchers = []);
    const fetched = await this.#requests.offsetFetch(coordinator, generation.assigned);
    if (this.#generation !== generation) return;
    if (fetched === null) return this.#lostCoordinator(coordinator, true);
    if (!fetched.ok) {
      this.#onGroupAnswer(fetched.errorCode, generation, coordinator);
      return this.#backOff();
    }
    generation.fetchers = generation.assigned.flatMap(({ topic, partitions }) =>
      partitions.map((partition) => {
        const offset = fetched.offsets.get(topicPartitionKey(topic, partition))!;
        if (offset >= 0) this.#committed.set(topicPartitionKey(topic, partition), offset);
        return new PartitionFetcher(this.#context, this.#pool, topic, partition, offset >= 0 ? offset : null, this.#options.maxWaitMs);
      }),
    );
  }

  async #heartbeat(): Promise<void> {
    const generation = this.#generation;
    const coordinator = this.#coordinator;
    if (generation === null || coordinator === null) return;
    const code = await this.#requests.heartbeat(coordinator, generation);
    if (code === null) return this.#lostCoordinator(coordinator);
    if (code === ErrorCode.REBALANCE_IN_PROGRESS) await this.#commitPositions(generation); // the generation still commits until it rejoins
    this.#onGroupAnswer(code, generation, coordinator);
  }

  /** The commit loop's round: the current generation's positions that moved, and a stale generation's while it lasts. */
  async #commitAll(): Promise<void> {
    const generation = this.#generation;
    if (generation !== null) await this.#commitPositions(generation);
    const stale = this.#stale;
    if (stale === null) return;
    if (this.#context.clock.nowMs() >= stale.untilMs) return void (this.#stale = null);
    if (this.#coordinator !== null) await this.#commitEvery(this.#coordinator, stale.generation); // its answers change nothing: the member is past it
  }

  /** Commits every position of `generation` that moved since its last commit (`all`: every one), and reacts to the answers. */
  async #commitPositions(generation: Generation, all = false): Promise<void> {
    const coordinator = this.#coordinator;
    if (coordinator === null || generation.fetchers === null) return;
    const moved = generation.fetchers.flatMap((fetcher) => {
      const previous = this.#committed.get(topicPartitionKey(fetcher.topic, fetcher.partition));
      if (fetcher.position === null || (fetcher.position === previous && !all)) return [];
      return [{ fetcher, offset: fetcher.position, reset: fetcher.resetSinceCommit && fetcher.position < (previous ?? -1) }];
    });
    if (moved.length === 0) return;
    const offsets: OffsetToCommit[] = moved.map(({ fetcher, offset, reset }) => ({ topic: fetcher.topic, partition: fetcher.partition, offset, reset }));
    const codes = await this.#requests.commit(coordinator, generation, offsets);
    if (codes === null) return this.#lostCoordinator(coordinator);
    for (const { fetcher, offset } of moved) {
      const code = codes.get(topicPartitionKey(fetcher.topic, fetcher.partition))!;
      if (code === ErrorCode.NONE) {
        this.#committed.set(topicPartitionKey(fetcher.topic, fetcher.partition), offset);
        fetcher.resetSinceCommit = false;
      } else this.#onGroupAnswer(code, generation, coordinator);
    }
  }

  /** Commits every known position of `generation`, moved or not, ignoring the answers (a lapse's commit under a generation past). */
  async #commitEvery(coordinator: number, generation: Generation): Promise<void> {
    const offsets = (generation.fetchers ?? []).flatMap((f) => (f.position === null ? [] : [{ topic: f.topic, partition: f.partition, offset: f.position, reset: false }]));
    if (offsets.length > 0) await this.#requests.commit(coordinator, generation, offsets);
  }

  /** An answer of `coordinator` to `generation`: end it, or find the coordinator again. */
  #onGroupAnswer(code: number, generation: Generation, coordinator: number): void {
    if (this.#generation !== generation) return;
    const reaction = groupReaction(code);
    if (reaction === 'find-coordinator') this.#lostCoordinator(coordinator);
    else if (reaction === 'rejoin' || reaction === 'rejoin-as-new') this.#endGeneration(generation, reaction === 'rejoin-as-new');
  }

  /** The generation ended (`asNew`: the coordinator forgot the member); a lapse armed for it begins here. */
  #endGeneration(generation: Generation, asNew: boolean): void {
    if (this.#zombieHolds(generation)) return;
    if (this.#armed?.kind === 'stale-commits') {
      this.#stale = { generation, untilMs: this.#context.clock.nowMs() + this.#armed.ms };
      this.#armed = null;
    }
    this.#generation = null;
    this.#zombie = null;
    if (asNew) this.#memberId = '';
  }

  /** Whether a zombie holds on to `generation` (one armed begins to now). */
  #zombieHolds(generation: Generation): boolean {
    const nowMs = this.#context.clock.nowMs();
    if (this.#zombie?.generation === generation) return nowMs < this.#zombie.untilMs;
    if (this.#armed?.kind !== 'zombie') return false;
    this.#zombie = { generation, untilMs: nowMs + this.#armed.ms };
    this.#armed = null;
    return true;
  }

  async #onJoinError(code: number, coordinator: number): Promise<void> {
    const reaction = groupReaction(code);
    if (reaction === 'rejoin-as-new') this.#memberId = '';
    if (reaction === 'find-coordinator') this.#lostCoordinator(coordinator);
    if (code !== ErrorCode.REBALANCE_IN_PROGRESS) await this.#backOff();
  }

  /** `coordinator` did not answer, moved or is not available: find it again (the generation stays: it may live on there). */
  #lostCoordinator(coordinator: number, backOff = false): Promise<void> | void {
    if (this.#coordinator === coordinator) this.#coordinator = null;
    if (backOff) return this.#backOff();
  }

  #backOff(): Promise<void> {
    return sleep(this.#context.clock, backoffMs(this.#context));
  }
}
