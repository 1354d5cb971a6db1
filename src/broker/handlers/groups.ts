import type { HeartbeatRequest, HeartbeatResponse } from '../apis/heartbeat.ts';
import type { JoinGroupRequest, JoinGroupResponse } from '../apis/join-group.ts';
import type { LeaveGroupRequest, LeaveGroupResponse } from '../apis/leave-group.ts';
import type { OffsetCommitRequest, OffsetCommitResponse } from '../apis/offset-commit.ts';
import type { OffsetFetchRequest, OffsetFetchResponse } from '../apis/offset-fetch.ts';
import type { SyncGroupRequest, SyncGroupResponse } from '../apis/sync-group.ts';
import type { BrokerContext } from '../context.ts';
import type { Session } from '../../security/session.ts';
import { allowed, allowedNames, LOCAL_SESSION } from './authorize.ts';
import { AclOperation, ResourceType } from '../../security/acl/model.ts';
import type { CoordinatorClaim, GroupOffset } from '../groups/offset-store.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import type { Uuid } from '../../util/uuid.ts';
import { isFerryError } from '../../errors.ts';
import { isStoreError } from '../../store/errors.ts';
import { errorCodeOf } from './errors.ts';
import { regressed } from '../../util/regressions.ts';

/** Group requests belong to the group's coordinator; elsewhere they get NOT_COORDINATOR (the client asks again). */
function notCoordinator(context: BrokerContext, groupId: string): boolean {
  return context.topology.coordinatorFor(groupId)?.nodeId !== context.nodeId;
}

/**
 * This broker's claim on the group (GroupOffsetStore.claim), taken before it holds any state of
 * the group; an error code when the group's record cannot be read or written now.
 */
async function claimGroup(context: BrokerContext, groupId: string, fresh = false): Promise<CoordinatorClaim | number> {
  try {
    return await context.offsets.claim(groupId, fresh);
  } catch (error) {
    // A group id the store cannot name a record by (past its key length): no retry helps.
    if (causes(error).some((cause) => isStoreError(cause, 'InvalidArgument'))) return ErrorCode.INVALID_GROUP_ID;
    return coordinatorErrorCode(error);
  }
}

/**
 * The error code for a failure of the store under a group request: a store failure is Kafka's
 * answer while a coordinator is not ready, which every client retries (finding the coordinator
 * again). Kafka's coordinator never answers KAFKA_STORAGE_ERROR (CoordinatorOperationExceptionHelper
 * maps it to a coordinator error), and the Java consumer takes it, answered to an OffsetCommit, for
 * an unexpected error and fails the commit for good.
 */
function coordinatorErrorCode(error: unknown): number {
  const code = errorCodeOf(error);
  return code === ErrorCode.KAFKA_STORAGE_ERROR ? ErrorCode.COORDINATOR_NOT_AVAILABLE : code;
}

/** `error` and the errors it wraps (a control record's FerryError wraps the store's). */
function causes(error: unknown): unknown[] {
  const chain: unknown[] = [];
  for (let at = error; at !== undefined && chain.length < CAUSE_DEPTH_MAX; at = at instanceof Error ? at.cause : undefined) chain.push(at);
  return chain;
}

/** How deep `causes` looks: wrappers here nest one or two deep. */
const CAUSE_DEPTH_MAX = 8;

/** READ on the group, which every classic group request needs first (Kafka's KafkaApis: GROUP_AUTHORIZATION_FAILED). */
function mayReadGroup(context: BrokerContext, session: Session, groupId: string): boolean {
  return allowed(context, session, AclOperation.READ, ResourceType.GROUP, groupId);
}

/** `clientHost`: the client's address as Kafka shows it in DescribeGroups ("/127.0.0.1"). */
export async function handleJoinGroup(context: BrokerContext, request: JoinGroupRequest, clientId: string, clientHost = '', session: Session = LOCAL_SESSION): Promise<JoinGroupResponse> {
  const failed = (errorCode: number): JoinGroupResponse => ({ throttleTimeMs: 0, errorCode, generationId: -1, protocolName: '', leader: '', memberId: request.memberId, members: [] });
  // Kafka's error response to a refused join names no member (JoinGroupRequest.getErrorResponse).
  if (!mayReadGroup(context, session, request.groupId)) return { ...failed(ErrorCode.GROUP_AUTHORIZATION_FAILED), memberId: '' };
  if (notCoordinator(context, request.groupId)) return failed(ErrorCode.NOT_COORDINATOR);
  const join = {
    groupId: request.groupId,
    memberId: request.memberId,
    clientId,
    clientHost,
    sessionTimeoutMs: request.sessionTimeoutMs,
    rebalanceTimeoutMs: request.rebalanceTimeoutMs > 0 ? request.rebalanceTimeoutMs : request.sessionTimeoutMs,
    protocolType: request.protocolType,
    protocols: request.protocols,
  };
  const refusal = context.groups.refusal(join);
  if (refusal !== ErrorCode.NONE) return failed(refusal); // refused anyway: the group is not taken from its coordinator for it
  // [G1] A group with members here goes on under its claim (a write under it finds out if it was
  // lost); an empty one is claimed from its record as it is now, never from a claim cached earlier.
  const claim = await claimGroup(context, request.groupId, !context.groups.hasMembers(request.groupId));
  if (typeof claim === 'number') return failed(claim);
  const result = await context.groups.join({ ...join, claim });
  // v7+ name the group's protocol type (its first member's: the coordinator refuses others' as inconsistent).
  return {
    throttleTimeMs: 0,
    ...result,
    protocolType: result.errorCode === ErrorCode.NONE ? request.protocolType : null,
    members: result.members.map((m) => ({ memberId: m.memberId, groupInstanceId: null, metadata: m.metadata })),
  };
}

export async function handleSyncGroup(context: BrokerContext, request: SyncGroupRequest, session: Session = LOCAL_SESSION): Promise<SyncGroupResponse> {
  if (!mayReadGroup(context, session, request.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, assignment: new Uint8Array(0) };
  if (notCoordinator(context, request.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.NOT_COORDINATOR, assignment: new Uint8Array(0) };
  const result = await context.groups.sync(request.groupId, request.generationId, request.memberId, request.assignments);
  // v5 echoes the member's protocol type and name (KIP-559), which its JoinGroup answer gave it.
  return { throttleTimeMs: 0, ...result, protocolType: request.protocolType, protocolName: request.protocolName };
}

export function handleHeartbeat(context: BrokerContext, request: HeartbeatRequest, session: Session = LOCAL_SESSION): HeartbeatResponse {
  if (!mayReadGroup(context, session, request.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
  if (notCoordinator(context, request.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.NOT_COORDINATOR };
  return { throttleTimeMs: 0, errorCode: context.groups.heartbeat(request.groupId, request.generationId, request.memberId) };
}

/**
 * The members a LeaveGroup names: v3+ list them (KIP-345); v0-2 name one in member_id, and their
 * members list decodes empty (v3+ leave member_id at its default, the empty string).
 */
function leavingMembers(request: LeaveGroupRequest): readonly { memberId: string; groupInstanceId: string | null }[] {
  if (request.members.length === 0 && request.memberId !== '') return [{ memberId: request.memberId, groupInstanceId: null }];
  return request.members;
}

export function handleLeaveGroup(context: BrokerContext, request: LeaveGroupRequest, session: Session = LOCAL_SESSION): LeaveGroupResponse {
  if (!mayReadGroup(context, session, request.groupId)) return { throttleTimeMs: 0, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, members: [] };
  const members = leavingMembers(request).map((member) => ({ memberId: member.memberId, groupInstanceId: member.groupInstanceId, errorCode: context.groups.leave(request.groupId, member.memberId) }));
  return { throttleTimeMs: 0, errorCode: members.every((m) => m.errorCode === ErrorCode.NONE) ? ErrorCode.NONE : members[0]!.errorCode, members };
}

/**
 * Commits a group's offsets. Authorized as Kafka's KafkaApis.handleOffsetCommitRequest: READ on
 * the group (else GROUP_AUTHORIZATION_FAILED for every partition), then READ on each topic (else
 * TOPIC_AUTHORIZATION_FAILED for its partitions, which are not committed); only the authorized
 * topics go on to the coordinator.
 */
export async function handleOffsetCommit(context: BrokerContext, request: OffsetCommitRequest, session: Session = LOCAL_SESSION): Promise<OffsetCommitResponse> {
  if (!mayReadGroup(context, session, request.groupId)) return commitResponse(request, () => ErrorCode.GROUP_AUTHORIZATION_FAILED);
  const readable = allowedNames(
    context,
    session,
    AclOperation.READ,
    ResourceType.TOPIC,
    request.topics.map((topic) => topic.name),
  );
  const authorized = request.topics.filter((topic) => readable.has(topic.name));
  const committed = authorized.length === 0 ? [] : [...(await commitAuthorized(context, { ...request, topics: authorized })).topics];
  // The coordinator answers each topic it was given, in order: the refused ones go between them.
  const topics = request.topics.map((topic) =>
    readable.has(topic.name)
      ? committed.shift()!
      : { name: topic.name, partitions: topic.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED })) },
  );
  return { throttleTimeMs: 0, topics };
}

async function commitAuthorized(context: BrokerContext, request: OffsetCommitRequest): Promise<OffsetCommitResponse> {
  if (notCoordinator(context, request.groupId)) return commitResponse(request, () => ErrorCode.NOT_COORDINATOR);
  const permit = context.groups.beginCommit(request.groupId, request.generationIdOrMemberEpoch, request.memberId);
  if (!('done' in permit)) return commitResponse(request, () => permit.errorCode);
  try {
    const claim = permit.claim ?? (await claimGroup(context, request.groupId));
    if (typeof claim === 'number') return commitResponse(request, () => claim);
    return await commitUnder(context, request, claim, permit);
  } finally {
    permit.done();
  }
}

/** Writes the request's offsets under `claim`: refused (NOT_COORDINATOR) once another coordinator claimed the group. */
async function commitUnder(context: BrokerContext, request: OffsetCommitRequest, claim: CoordinatorClaim, permit: { recheck(): number }): Promise<OffsetCommitResponse> {
  // An offset names the incarnation of its topic (docs/design.md contract 10). A partition of no topic
  // (deleted, or not created yet) has none: as Kafka does, the commit is refused, never stored
  // without an id (which would count for whatever incarnation comes next).
  const incarnations = new Map<string, { topicId: Uuid; partitions: number } | null>();
  try {
    for (const topic of request.topics) {
      const partitions = await context.topology.partitionCount(topic.name); // reads the topic's record when not seen yet
      const topicId = context.topology.topicId(topic.name);
      incarnations.set(topic.name, partitions === null || topicId === null ? null : { topicId, partitions });
    }
  } catch (error) {
    // A topic's record could not be read now: answered like an offsets write that failed (nothing stored), never a closed connection.
    const code = coordinatorErrorCode(error);
    return commitResponse(request, () => code);
  }
  const known = (name: string, partition: number) => {
    const incarnation = incarnations.get(name);
    return incarnation !== null && incarnation !== undefined && partition >= 0 && partition < incarnation.partitions ? incarnation : null;
  };
  const commitTimestampMs = context.clock.nowMs(); // offsets expire from here (offset-expiry.ts)
  const byMember = request.generationIdOrMemberEpoch >= 0; // a simple consumer commits with generation -1
  const offsets = request.topics.flatMap((topic) =>
    topic.partitions.flatMap((p) => {
      const incarnation = known(topic.name, p.partitionIndex);
      return incarnation === null
        ? []
        : [
            {
              topic: topic.name,
              partition: p.partitionIndex,
              committed: { offset: p.committedOffset, leaderEpoch: p.committedLeaderEpoch, metadata: p.committedMetadata, commitTimestampMs, byMember, topicId: incarnation.topicId },
            },
          ];
    }),
  );
  const stored =
    offsets.length === 0
      ? ErrorCode.NONE
      : await context.offsets
          .commit(request.groupId, offsets, claim, () => permit.recheck() === ErrorCode.NONE)
          .then(
            () => ErrorCode.NONE,
            (error: unknown) => (isFerryError(error, 'StaleMember') ? permit.recheck() : regressed('offset-commit-storage-error') ? errorCodeOf(error) : coordinatorErrorCode(error)),
          );
  if (stored === ErrorCode.NOT_COORDINATOR) context.groups.drop(request.groupId, claim); // another broker holds the group now: its members here are stale
  return commitResponse(request, (name, partition) => (known(name, partition) === null ? ErrorCode.UNKNOWN_TOPIC_OR_PARTITION : stored));
}

function commitResponse(request: OffsetCommitRequest, errorOf: (topic: string, partition: number) => number): OffsetCommitResponse {
  return {
    throttleTimeMs: 0,
    topics: request.topics.map((topic) => ({ name: topic.name, partitions: topic.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: errorOf(topic.name, p.partitionIndex) })) })),
  };
}

/**
 * Committed offsets: of one group (v0-v7), or of each group the request names (v8+, KIP-709).
 * The version writes the shape it has. Authorized as Kafka's KafkaApis.handleOffsetFetchRequest:
 * DESCRIBE on each group (else GROUP_AUTHORIZATION_FAILED), then DESCRIBE on each topic: a topic
 * named without it is answered TOPIC_AUTHORIZATION_FAILED; one the client did not name (all the
 * group's offsets asked for) is left out.
 */
export async function handleOffsetFetch(context: BrokerContext, request: OffsetFetchRequest, session: Session = LOCAL_SESSION): Promise<OffsetFetchResponse> {
  if (request.groups.length === 0) {
    const { errorCode, topics } = await authorizedGroupOffsets(context, session, request.groupId, request.topics);
    return { throttleTimeMs: 0, topics, errorCode };
  }
  const groups = await Promise.all(request.groups.map(async (group) => ({ groupId: group.groupId, ...(await authorizedGroupOffsets(context, session, group.groupId, group.topics)) })));
  return { throttleTimeMs: 0, groups };
}

interface GroupOffsetsAnswer {
  readonly errorCode: number;
  readonly topics: { name: string; partitions: { partitionIndex: number; committedOffset: number; committedLeaderEpoch: number; metadata: string; errorCode: number }[] }[];
}

type WantedTopic = { readonly name: string; readonly partitionIndexes: readonly number[] };
/** The partitions an OffsetFetch names; null: every partition the group committed. */
type WantedOffsets = readonly WantedTopic[] | null;

async function authorizedGroupOffsets(context: BrokerContext, session: Session, groupId: string, wanted: WantedOffsets): Promise<GroupOffsetsAnswer> {
  if (!allowed(context, session, AclOperation.DESCRIBE, ResourceType.GROUP, groupId)) return offsetFetchFailed(wanted, ErrorCode.GROUP_AUTHORIZATION_FAILED);
  if (wanted === null) {
    const answer = await groupOffsets(context, groupId, null);
    if (answer.errorCode !== ErrorCode.NONE) return answer;
    const describable = allowedNames(
      context,
      session,
      AclOperation.DESCRIBE,
      ResourceType.TOPIC,
      answer.topics.map((topic) => topic.name),
    );
    return { ...answer, topics: answer.topics.filter((topic) => describable.has(topic.name)) };
  }
  const describable = allowedNames(
    context,
    session,
    AclOperation.DESCRIBE,
    ResourceType.TOPIC,
    wanted.map((topic) => topic.name),
  );
  const answer = await groupOffsets(
    context,
    groupId,
    wanted.filter((topic) => describable.has(topic.name)),
  );
  if (answer.errorCode !== ErrorCode.NONE) return answer;
  const answered = new Map(answer.topics.map((topic) => [topic.name, topic]));
  const refused = (topic: WantedTopic) => offsetFetchFailed([topic], ErrorCode.TOPIC_AUTHORIZATION_FAILED).topics[0]!;
  return { errorCode: ErrorCode.NONE, topics: wanted.map((topic) => (describable.has(topic.name) ? answered.get(topic.name)! : refused(topic))) };
}

/** One group's committed offsets for `wanted` (null: every partition it committed). */
async function groupOffsets(context: BrokerContext, groupId: string, wanted: WantedOffsets): Promise<GroupOffsetsAnswer> {
  if (notCoordinator(context, groupId)) return { topics: [], errorCode: ErrorCode.NOT_COORDINATOR };
  let stored: GroupOffset[];
  try {
    stored = await ofCurrentIncarnations(context, await context.offsets.list(groupId));
  } catch (error) {
    if (errorCodeOf(error) !== ErrorCode.KAFKA_STORAGE_ERROR) throw error;
    // The group's offsets cannot be read now: Kafka's answer while a coordinator loads them, which every client retries.
    return offsetFetchFailed(wanted, ErrorCode.COORDINATOR_LOAD_IN_PROGRESS);
  }
  const topics = (wanted ?? groupTopics(stored)).map((topic) => ({
    name: topic.name,
    partitions: topic.partitionIndexes.map((partitionIndex) => {
      const committed = stored.find((o) => o.topic === topic.name && o.partition === partitionIndex)?.committed;
      return { partitionIndex, committedOffset: committed?.offset ?? -1, committedLeaderEpoch: committed?.leaderEpoch ?? -1, metadata: committed?.metadata ?? '', errorCode: ErrorCode.NONE };
    }),
  }));
  return { topics, errorCode: ErrorCode.NONE };
}

/**
 * The offsets minus those committed for a deleted incarnation of their topic: gone with it, as in
 * Kafka. An incarnation this broker has not seen yet is asked of the topic's record, once per id.
 */
async function ofCurrentIncarnations(context: BrokerContext, listed: readonly GroupOffset[]): Promise<GroupOffset[]> {
  const current = new Map<string, Promise<boolean>>();
  const isCurrent = (topic: string, topicId: Uuid): Promise<boolean> => {
    const key = `${topic}\u0000${topicId}`;
    let answer = current.get(key);
    if (answer === undefined) current.set(key, (answer = context.topology.isCurrentIncarnation(topic, topicId)));
    return answer;
  };
  const kept = await Promise.all(listed.map(({ topic, committed }) => (committed.topicId === undefined ? true : isCurrent(topic, committed.topicId))));
  return listed.filter((_, i) => kept[i]);
}

/** `errorCode` for the whole group, and for each partition asked for (OffsetFetch v0-v1 have no group-level code). */
function offsetFetchFailed(wanted: WantedOffsets, errorCode: number): GroupOffsetsAnswer {
  const topics = (wanted ?? []).map((topic) => ({
    name: topic.name,
    partitions: topic.partitionIndexes.map((partitionIndex) => ({ partitionIndex, committedOffset: -1, committedLeaderEpoch: -1, metadata: '', errorCode })),
  }));
  return { topics, errorCode };
}

/** Every topic and partition the group has committed (OffsetFetch with a null topic list). */
function groupTopics(stored: readonly GroupOffset[]): { name: string; partitionIndexes: number[] }[] {
  const byTopic = new Map<string, number[]>();
  for (const { topic, partition } of stored) byTopic.set(topic, [...(byTopic.get(topic) ?? []), partition]);
  return [...byTopic].map(([name, partitionIndexes]) => ({ name, partitionIndexes }));
}
