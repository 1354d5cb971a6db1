/**
 * The requests a group member sends its coordinator, each recorded in the history as it ends:
 * JoinGroup, SyncGroup, Heartbeat and LeaveGroup as GroupOps, OffsetCommit as a CommitOp and
 * OffsetFetch as an OffsetFetchOp per partition. FindCoordinator as a RequestOp (answer-allowed
 * judges its answer). An answer is its Kafka error code; null: no answer (the connection died, or the
 * client gave up).
 */
import type { OffsetCommitRequest } from '../../broker/apis/offset-commit.ts';
import { CoordinatorKeyType } from '../../broker/apis/find-coordinator.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import type { CommitOp, GroupMemberOp, JoinGroupOp, OffsetFetchOp, Outcome } from '../history.ts';
import { type BrokerPool, type NodeReply, UNKNOWN_NODE } from './brokers.ts';
import type { TopicPartitions } from './consumer-protocol.ts';
import type { ClientContext } from './context.ts';
import { answeredOutcome, recordRequest, unansweredOutcome } from './outcome.ts';
import { findCoordinatorApi, heartbeatApi, joinGroupApi, leaveGroupApi, offsetCommitApi, offsetFetchApi, syncGroupApi } from './wire-group.ts';

/** OffsetFetch's "nothing committed". */
export const NO_OFFSET = -1;
/** A LeaveGroup names no generation. */
const NO_GENERATION = -1;
/** OffsetCommit fields a member leaves to the broker: its retention, no leader epoch, no timestamp. */
const NO_RETENTION_TIME_MS = -1;
const NO_LEADER_EPOCH = -1;
const NO_TIMESTAMP = -1;

export interface JoinRequest {
  readonly memberId: string;
  readonly sessionTimeoutMs: number;
  readonly rebalanceTimeoutMs: number;
  readonly protocolType: string;
  readonly protocols: readonly { readonly name: string; readonly metadata: Uint8Array }[];
}

export interface JoinAnswer {
  readonly errorCode: number;
  readonly generationId: number;
  readonly memberId: string;
  readonly leader: string;
  readonly members: readonly string[];
}

/** One partition's offset to commit; `reset`: lower than the member's last commit on purpose. */
export interface OffsetToCommit {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly reset: boolean;
}

/** Who commits: the generation and member id the OffsetCommit names. */
export interface Committer {
  readonly generationId: number;
  readonly memberId: string;
}

/** What an OffsetFetch answered: each partition's committed offset (NO_OFFSET: none), or the first error. */
export type FetchedOffsets = { readonly ok: true; readonly offsets: ReadonlyMap<string, number> } | { readonly ok: false; readonly errorCode: number };

export function topicPartitionKey(topic: string, partition: number): string {
  return `${topic}/${partition}`;
}

export class GroupRequests {
  readonly #context: ClientContext;
  readonly #pool: BrokerPool;
  readonly #group: string;

  constructor(context: ClientContext, pool: BrokerPool, group: string) {
    this.#context = context;
    this.#pool = pool;
    this.#group = group;
  }

  /** The coordinator's node id (its address learned); null when no broker named one. */
  async findCoordinator(): Promise<number | null> {
    const startMs = this.#context.now();
    const reply = await this.#pool.send(UNKNOWN_NODE, findCoordinatorApi, { key: this.#group, keyType: CoordinatorKeyType.GROUP });
    recordRequest(this.#context, findCoordinatorApi.name, this.#group, startMs, reply, (response) => response.errorCode); // answer-allowed judges it
    if (!reply.answered || reply.response.errorCode !== ErrorCode.NONE) return null;
    this.#pool.learnAddress(reply.response.nodeId, { host: reply.response.host, port: reply.response.port });
    return reply.response.nodeId;
  }

  /** `timeoutMs`: a join waits for the whole rebalance. */
  async join(coordinator: number, request: JoinRequest, timeoutMs: number): Promise<JoinAnswer | null> {
    const startMs = this.#context.now();
    const reply = await this.#pool.send(coordinator, joinGroupApi, { groupId: this.#group, groupInstanceId: null, ...request }, timeoutMs);
    const answer: JoinAnswer | null = reply.answered
      ? {
          errorCode: reply.response.errorCode,
          generationId: reply.response.errorCode === ErrorCode.NONE ? reply.response.generationId : NO_GENERATION,
          memberId: reply.response.memberId,
          leader: reply.response.errorCode === ErrorCode.NONE ? reply.response.leader : '',
          members: reply.response.members.map((member) => member.memberId),
        }
      : null;
    const op: JoinGroupOp = {
      kind: 'join-group',
      ...this.#recorded(reply, startMs, answer?.errorCode),
      group: this.#group,
      askedMemberId: request.memberId,
      memberId: answer?.memberId || request.memberId,
      generationId: answer?.generationId ?? NO_GENERATION,
      leader: answer?.leader ?? '',
      members: answer?.members ?? [],
    };
    this.#context.record(op);
    return answer;
  }

  async sync(
    coordinator: number,
    member: Committer,
    assignments: readonly { memberId: string; assignment: Uint8Array }[],
    timeoutMs: number,
  ): Promise<{ errorCode: number; assignment: Uint8Array } | null> {
    const startMs = this.#context.now();
    const reply = await this.#pool.send(coordinator, syncGroupApi, { groupId: this.#group, ...member, groupInstanceId: null, assignments }, timeoutMs);
    this.#recordMember('sync-group', reply, startMs, member);
    return reply.answered ? { errorCode: reply.response.errorCode, assignment: reply.response.assignment } : null;
  }

  async heartbeat(coordinator: number, member: Committer): Promise<number | null> {
    const startMs = this.#context.now();
    const reply = await this.#pool.send(coordinator, heartbeatApi, { groupId: this.#group, ...member, groupInstanceId: null });
    this.#recordMember('heartbeat', reply, startMs, member);
    return reply.answered ? reply.response.errorCode : null;
  }

  async leave(coordinator: number, memberId: string): Promise<number | null> {
    const startMs = this.#context.now();
    const reply = await this.#pool.send(coordinator, leaveGroupApi, { groupId: this.#group, members: [{ memberId, groupInstanceId: null }] });
    const code = reply.answered ? (reply.response.members[0]?.errorCode ?? reply.response.errorCode) : null;
    this.#recordMember('leave-group', reply, startMs, { generationId: NO_GENERATION, memberId }, code ?? undefined);
    return code;
  }

  /** Commits `offsets` as `committer` (a CommitOp each); each partition's answer by topicPartitionKey, or null when none came. */
  async commit(coordinator: number, committer: Committer, offsets: readonly OffsetToCommit[]): Promise<Map<string, number> | null> {
    const byTopic = new Map<string, OffsetToCommit[]>();
    for (const entry of offsets) byTopic.set(entry.topic, [...(byTopic.get(entry.topic) ?? []), entry]);
    const request: OffsetCommitRequest = {
      groupId: this.#group,
      generationIdOrMemberEpoch: committer.generationId,
      memberId: committer.memberId,
      groupInstanceId: null,
      retentionTimeMs: NO_RETENTION_TIME_MS,
      topics: [...byTopic].map(([name, list]) => ({
        name,
        partitions: list.map((entry) => ({
          partitionIndex: entry.partition,
          committedOffset: entry.offset,
          committedLeaderEpoch: NO_LEADER_EPOCH,
          commitTimestamp: NO_TIMESTAMP,
          committedMetadata: null,
        })),
      })),
    };
    const startMs = this.#context.now();
    const reply = await this.#pool.send(coordinator, offsetCommitApi, request);
    const codes = reply.answered ? new Map<string, number>() : null;
    for (const entry of offsets) {
      const answered = reply.answered ? reply.response.topics.find((t) => t.name === entry.topic)?.partitions.find((p) => p.partitionIndex === entry.partition) : undefined;
      const code = reply.answered ? (answered?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR) : undefined;
      if (code !== undefined) codes!.set(topicPartitionKey(entry.topic, entry.partition), code);
      const op: CommitOp = { kind: 'commit', ...this.#recorded(reply, startMs, code), group: this.#group, ...entry, generationId: committer.generationId, memberId: committer.memberId };
      this.#context.record(op);
    }
    return codes;
  }

  /** The committed offsets of `assigned` (an OffsetFetchOp each); null when no answer came. */
  async offsetFetch(coordinator: number, assigned: readonly TopicPartitions[]): Promise<FetchedOffsets | null> {
    const startMs = this.#context.now();
    const reply = await this.#pool.send(coordinator, offsetFetchApi, { groupId: this.#group, topics: assigned.map((a) => ({ name: a.topic, partitionIndexes: a.partitions })) });
    const offsets = new Map<string, number>();
    let failure: number | null = null;
    for (const { topic, partitions } of assigned) {
      for (const partition of partitions) {
        const answer = reply.answered ? reply.response.topics.find((t) => t.name === topic)?.partitions.find((p) => p.partitionIndex === partition) : undefined;
        const code = !reply.answered ? undefined : reply.response.errorCode !== ErrorCode.NONE ? reply.response.errorCode : (answer?.errorCode ?? ErrorCode.UNKNOWN_SERVER_ERROR);
        const offset = code === ErrorCode.NONE ? answer!.committedOffset : NO_OFFSET;
        const op: OffsetFetchOp = { kind: 'offset-fetch', ...this.#recorded(reply, startMs, code), group: this.#group, topic, partition, offset };
        this.#context.record(op);
        if (code !== undefined && code !== ErrorCode.NONE) failure ??= code;
        offsets.set(topicPartitionKey(topic, partition), offset);
      }
    }
    if (!reply.answered) return null;
    return failure === null ? { ok: true, offsets } : { ok: false, errorCode: failure };
  }

  #recordMember(kind: GroupMemberOp['kind'], reply: NodeReply<{ errorCode: number }>, startMs: number, member: Committer, code?: number): void {
    const op: GroupMemberOp = { kind, ...this.#recorded(reply, startMs, code ?? (reply.answered ? reply.response.errorCode : undefined)), group: this.#group, ...member };
    this.#context.record(op);
  }

  /** The fields every op shares; `code`: the answer's error code (undefined: no answer). */
  #recorded(reply: NodeReply<unknown>, startMs: number, code: number | undefined): { client: string; node: number; startMs: number; endMs: number; outcome: Outcome } {
    const outcome = reply.answered ? answeredOutcome(code ?? ErrorCode.UNKNOWN_SERVER_ERROR) : unansweredOutcome(reply.error);
    return { client: this.#context.name, node: reply.node, startMs, endMs: this.#context.now(), outcome };
  }
}
