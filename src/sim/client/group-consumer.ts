/**
 * A simulated consumer in a group: finds the coordinator, joins (the leader deals the partitions
 * round-robin), reads each assigned partition's committed offset (an OffsetFetchOp), fetches the
 * assigned partitions in turn, heartbeats and commits its positions (CommitOps) on the clock.
 * A generation ends on REBALANCE_IN_PROGRESS, UNKNOWN_MEMBER_ID or ILLEGAL_GENERATION (join
 * again) and on coordinator errors or a lost connection (find the coordinator again first).
 */
import type { OffsetCommitRequest } from '../../broker/apis/offset-commit.ts';
import { CoordinatorKeyType } from '../../broker/apis/find-coordinator.ts';
import { ErrorCode } from '../../broker/protocol/error-codes.ts';
import type { CommitOp, OffsetFetchOp } from '../history.ts';
import { BrokerPool, type NodeReply, UNKNOWN_NODE } from './brokers.ts';
import { assignRoundRobin, decodeAssignment, encodeAssignment, encodeSubscription, type TopicPartitions } from './consumer-protocol.ts';
import { backoffMs, type ClientContext, type ClientOptions, clientContext, type SimClient, sleep } from './context.ts';
import { coordinatorMoved, needsRejoin } from './errors.ts';
import { answeredOutcome, recordRequest, unansweredOutcome } from './outcome.ts';
import { PartitionFetcher } from './partition-fetcher.ts';
import { findCoordinatorApi, heartbeatApi, joinGroupApi, leaveGroupApi, offsetCommitApi, offsetFetchApi, syncGroupApi } from './wire-group.ts';

export const SESSION_TIMEOUT_MS_DEFAULT = 10_000;
export const REBALANCE_TIMEOUT_MS_DEFAULT = 5_000;
export const HEARTBEAT_INTERVAL_MS_DEFAULT = 1_000;
export const COMMIT_INTERVAL_MS_DEFAULT = 1_000;
const PROTOCOL_TYPE = 'consumer';
const ASSIGNOR = 'roundrobin';
/** OffsetFetch's "nothing committed". */
const NO_OFFSET = -1;
/** OffsetCommit fields this consumer leaves to the broker: its retention, no leader epoch, no timestamp. */
const NO_RETENTION_TIME_MS = -1;
const NO_LEADER_EPOCH = -1;
const NO_TIMESTAMP = -1;

export interface GroupConsumerOptions extends ClientOptions {
  readonly group: string;
  readonly topics: readonly string[];
  readonly sessionTimeoutMs?: number;
  readonly rebalanceTimeoutMs?: number;
  readonly heartbeatIntervalMs?: number;
  readonly commitIntervalMs?: number;
  /** How long the broker may hold a Fetch with nothing to return. */
  readonly maxWaitMs?: number;
}

interface Generation {
  readonly generationId: number;
  readonly memberId: string;
  readonly fetchers: readonly PartitionFetcher[];
}

export class SimGroupConsumer implements SimClient {
  readonly #context: ClientContext;
  readonly #pool: BrokerPool;
  readonly #options: GroupConsumerOptions;
  readonly #sessionTimeoutMs: number;
  readonly #rebalanceTimeoutMs: number;
  #coordinator: number | null = null;
  #memberId = '';
  #generation: Generation | null = null;
  /** What each partition's last commit that succeeded stored. */
  readonly #committed = new Map<string, number>();
  #running = false;
  #loops: Promise<unknown> = Promise.resolve();

  constructor(options: GroupConsumerOptions) {
    this.#context = clientContext(options);
    this.#pool = new BrokerPool(this.#context);
    this.#options = options;
    this.#sessionTimeoutMs = options.sessionTimeoutMs ?? SESSION_TIMEOUT_MS_DEFAULT;
    this.#rebalanceTimeoutMs = options.rebalanceTimeoutMs ?? REBALANCE_TIMEOUT_MS_DEFAULT;
  }

  get name(): string {
    return this.#context.name;
  }

  /** The partitions of the current generation (empty between generations). */
  get assignment(): { topic: string; partition: number; position: number | null }[] {
    return (this.#generation?.fetchers ?? []).map((f) => ({ topic: f.topic, partition: f.partition, position: f.position }));
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loops = Promise.all([
      this.#run(),
      this.#every(this.#options.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS_DEFAULT, () => this.#heartbeat()),
      this.#every(this.#options.commitIntervalMs ?? COMMIT_INTERVAL_MS_DEFAULT, () => this.commit()),
    ]);
  }

  /** Graceful: commits the positions and leaves the group. Otherwise just drops the connections (a crash). */
  async stop(graceful = true): Promise<void> {
    this.#running = false;
    const generation = this.#generation;
    const coordinator = this.#coordinator;
    if (graceful && generation !== null && coordinator !== null) {
      await this.commit();
      const startMs = this.#context.now();
      const reply = await this.#pool.send(coordinator, leaveGroupApi, { groupId: this.#options.group, members: [{ memberId: generation.memberId, groupInstanceId: null }] });
      this.#recordRequest(leaveGroupApi.name, startMs, reply, (response) => (response.errorCode !== ErrorCode.NONE ? response.errorCode : (response.members[0]?.errorCode ?? ErrorCode.NONE)));
    }
    this.#generation = null;
    this.#pool.close();
    await this.#loops;
  }

  /** Commits every assigned partition whose position moved since its last commit (a CommitOp each). */
  async commit(): Promise<void> {
    const generation = this.#generation;
    const coordinator = this.#coordinator;
    if (generation === null || coordinator === null) return;
    const commits = generation.fetchers.flatMap((fetcher) => {
      const previous = this.#committed.get(key(fetcher.topic, fetcher.partition));
      if (fetcher.position === null || fetcher.position === previous) return [];
      return [{ fetcher, offset: fetcher.position, reset: fetcher.resetSinceCommit && fetcher.position < (previous ?? NO_OFFSET) }];
    });
    if (commits.length === 0) return;
    const byTopic = new Map<string, typeof commits>();
    for (const commit of commits) byTopic.set(commit.fetcher.topic, [...(byTopic.get(commit.fetcher.topic) ?? []), commit]);
    const request: OffsetCommitRequest = {
      groupId: this.#options.group,
      generationIdOrMemberEpoch: generation.generationId,
      memberId: generation.memberId,
      groupInstanceId: null,
      retentionTimeMs: NO_RETENTION_TIME_MS,
      topics: [...byTopic].map(([name, list]) => ({
        name,
        partitions: list.map((c) => ({
          partitionIndex: c.fetcher.partition,
          committedOffset: c.offset,
          committedLeaderEpoch: NO_LEADER_EPOCH,
          commitTimestamp: NO_TIMESTAMP,
          committedMetadata: null,
        })),
      })),
    };
    const startMs = this.#context.now();
    const reply = await this.#pool.send(coordinator, offsetCommitApi, request);
    const endMs = this.#context.now();
    for (const { fetcher, offset, reset } of commits) {
      const code = reply.answered
        ? (reply.response.topics.find((t) => t.name === fetcher.topic)?.partitions.find((p) => p.partitionIndex === fetcher.partition)?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR)
        : null;
      const outcome = reply.answered ? answeredOutcome(code!) : unansweredOutcome(reply.error);
      const op: CommitOp = {
        kind: 'commit',
        client: this.#context.name,
        node: reply.node,
        startMs,
        endMs,
        outcome,
        group: this.#options.group,
        topic: fetcher.topic,
        partition: fetcher.partition,
        offset,
        reset,
      };
      this.#context.record(op);
      if (code === ErrorCode.NONE) {
        this.#committed.set(key(fetcher.topic, fetcher.partition), offset);
        fetcher.resetSinceCommit = false;
      } else if (code !== null) this.#onGroupError(code, generation);
    }
    if (!reply.answered) this.#lostCoordinator(generation);
  }

  async #every(intervalMs: number, task: () => Promise<void>): Promise<void> {
    while (this.#running) {
      await sleep(this.#context.clock, intervalMs);
      if (this.#running) await task();
    }
  }

  async #run(): Promise<void> {
    while (this.#running) {
      if (this.#coordinator === null) await this.#findCoordinator();
      else if (this.#generation === null) await this.#join();
      else await this.#fetchRound(this.#generation);
    }
  }

  async #fetchRound(generation: Generation): Promise<void> {
    if (generation.fetchers.length === 0) return sleep(this.#context.clock, this.#options.heartbeatIntervalMs ?? HEARTBEAT_INTERVAL_MS_DEFAULT);
    for (const fetcher of generation.fetchers) {
      if (this.#generation !== generation || !this.#running) return;
      await fetcher.step();
    }
  }

  async #findCoordinator(): Promise<void> {
    const startMs = this.#context.now();
    const reply = await this.#pool.send(UNKNOWN_NODE, findCoordinatorApi, { key: this.#options.group, keyType: CoordinatorKeyType.GROUP });
    this.#recordRequest(findCoordinatorApi.name, startMs, reply, (response) => response.errorCode);
    if (reply.answered && reply.response.errorCode === ErrorCode.NONE) {
      this.#pool.learnAddress(reply.response.nodeId, { host: reply.response.host, port: reply.response.port });
      this.#coordinator = reply.response.nodeId;
      return;
    }
    await this.#backOff();
  }

  async #join(): Promise<void> {
    const coordinator = this.#coordinator!;
    const joinStartMs = this.#context.now();
    const join = await this.#pool.send(
      coordinator,
      joinGroupApi,
      {
        groupId: this.#options.group,
        sessionTimeoutMs: this.#sessionTimeoutMs,
        rebalanceTimeoutMs: this.#rebalanceTimeoutMs,
        memberId: this.#memberId,
        groupInstanceId: null,
        protocolType: PROTOCOL_TYPE,
        protocols: [{ name: ASSIGNOR, metadata: encodeSubscription(this.#options.topics) }],
      },
      this.#rebalanceTimeoutMs + this.#context.requestTimeoutMs,
    );
    this.#recordRequest(joinGroupApi.name, joinStartMs, join, (response) => response.errorCode);
    if (!join.answered) return this.#lostCoordinator(null, true);
    const { errorCode, generationId, memberId, leader, members } = join.response;
    if (errorCode === ErrorCode.MEMBER_ID_REQUIRED) return void (this.#memberId = memberId);
    if (errorCode !== ErrorCode.NONE) return this.#onJoinError(errorCode);
    this.#memberId = memberId;
    const assignments = leader === memberId ? await this.#assign(members.map((m) => m.memberId)) : [];
    if (assignments === null) return this.#backOff();
    const syncStartMs = this.#context.now();
    const sync = await this.#pool.send(
      coordinator,
      syncGroupApi,
      { groupId: this.#options.group, generationId, memberId, groupInstanceId: null, assignments },
      this.#rebalanceTimeoutMs + this.#context.requestTimeoutMs,
    );
    this.#recordRequest(syncGroupApi.name, syncStartMs, sync, (response) => response.errorCode);
    if (!sync.answered) return this.#lostCoordinator(null, true);
    if (sync.response.errorCode !== ErrorCode.NONE) return this.#onJoinError(sync.response.errorCode);
    const assigned = decodeAssignment(sync.response.assignment);
    const fetchers = await this.#committedPositions(coordinator, assigned);
    if (fetchers === null) return;
    this.#generation = { generationId, memberId, fetchers };
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

  /** OffsetFetch of the assigned partitions (an OffsetFetchOp each), as fetchers at those positions; null on an error. */
  async #committedPositions(coordinator: number, assigned: readonly TopicPartitions[]): Promise<PartitionFetcher[] | null> {
    if (assigned.length === 0) return [];
    const startMs = this.#context.now();
    const reply = await this.#pool.send(coordinator, offsetFetchApi, { groupId: this.#options.group, topics: assigned.map((a) => ({ name: a.topic, partitionIndexes: a.partitions })) });
    const endMs = this.#context.now();
    const fetchers: PartitionFetcher[] = [];
    let failure: number | null = null;
    for (const { topic, partitions } of assigned) {
      for (const partition of partitions) {
        const answer = reply.answered ? reply.response.topics.find((t) => t.name === topic)?.partitions.find((p) => p.partitionIndex === partition) : undefined;
        const code = !reply.answered ? null : reply.response.errorCode !== ErrorCode.NONE ? reply.response.errorCode : (answer?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR);
        const outcome = reply.answered ? answeredOutcome(code!) : unansweredOutcome(reply.error);
        const offset = outcome.ok ? answer!.committedOffset : NO_OFFSET;
        const op: OffsetFetchOp = { kind: 'offset-fetch', client: this.#context.name, node: reply.node, startMs, endMs, outcome, group: this.#options.group, topic, partition, offset };
        this.#context.record(op);
        if (code !== ErrorCode.NONE) failure = code;
        if (offset >= 0) this.#committed.set(key(topic, partition), offset);
        fetchers.push(new PartitionFetcher(this.#context, this.#pool, topic, partition, offset >= 0 ? offset : null, this.#options.maxWaitMs));
      }
    }
    if (!reply.answered) await this.#lostCoordinator(null, true);
    else if (failure !== null) await this.#onJoinError(failure);
    else return fetchers;
    return null;
  }

  async #heartbeat(): Promise<void> {
    const generation = this.#generation;
    const coordinator = this.#coordinator;
    if (generation === null || coordinator === null) return;
    const startMs = this.#context.now();
    const reply = await this.#pool.send(coordinator, heartbeatApi, { groupId: this.#options.group, generationId: generation.generationId, memberId: generation.memberId, groupInstanceId: null });
    this.#recordRequest(heartbeatApi.name, startMs, reply, (response) => response.errorCode);
    if (!reply.answered) return this.#lostCoordinator(generation);
    const code = reply.response.errorCode;
    if (code === ErrorCode.REBALANCE_IN_PROGRESS) await this.commit(); // the generation still commits until it rejoins
    if (code !== ErrorCode.NONE) this.#onGroupError(code, generation);
  }

  /** A group error in `generation`: end it, and say what the next join needs. */
  #onGroupError(code: number, generation: Generation): void {
    if (this.#generation !== generation) return;
    if (needsRejoin(code)) {
      this.#generation = null;
      if (code === ErrorCode.UNKNOWN_MEMBER_ID) this.#memberId = '';
    } else if (coordinatorMoved(code)) this.#lostCoordinator(generation);
  }

  async #onJoinError(code: number): Promise<void> {
    if (code === ErrorCode.UNKNOWN_MEMBER_ID) this.#memberId = '';
    if (coordinatorMoved(code)) this.#coordinator = null;
    if (code !== ErrorCode.REBALANCE_IN_PROGRESS) await this.#backOff();
  }

  /** No answer from the coordinator (or it moved): find it again; the generation may live on there. */
  #lostCoordinator(generation: Generation | null, backOff = false): Promise<void> | void {
    if (generation !== null && this.#generation !== generation) return;
    this.#coordinator = null;
    this.#generation = null;
    if (backOff) return this.#backOff();
  }

  /** A group API's answer into the history (answer-allowed judges it). */
  #recordRequest<Response>(api: string, startMs: number, reply: NodeReply<Response>, codeOf: (response: Response) => number): void {
    recordRequest(this.#context, api, this.#options.group, startMs, reply, codeOf);
  }

  #backOff(): Promise<void> {
    return sleep(this.#context.clock, backoffMs(this.#context));
  }
}

function key(topic: string, partition: number): string {
  return `${topic}/${partition}`;
}
