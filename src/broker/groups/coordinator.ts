import { ErrorCode } from '../../protocol/error-codes.ts';
import type { Clock, Timer } from '../../util/clock.ts';
import { regressed } from '../../util/regressions.ts';
import { type CoordinatorClaim, sameClaim } from './offset-store.ts';

/** How long a rebalance waits for more members after the first join of an empty group (Kafka: 3 s). */
/**
 * The most of a client id a member id starts with (Kafka's own is the whole id): a member id goes
 * back in JoinGroup and DescribeGroups answers, whose STRINGs hold 32767 bytes, and a client id
 * may already be that long. 1024 UTF-16 units are at most 3072 UTF-8 bytes.
 */
const MEMBER_ID_CLIENT_PREFIX_MAX = 1024;

export const INITIAL_REBALANCE_DELAY_MS = 300;
/** Kafka's group.min/max.session.timeout.ms. */
export const SESSION_TIMEOUT_MS_MIN = 1000;
export const SESSION_TIMEOUT_MS_MAX = 30 * 60 * 1000;
/** Members one group may hold; bounds memory per group. */
export const GROUP_MEMBERS_MAX = 1000;
/**
 * Groups one coordinator holds in memory (a few hundred bytes each when empty, more with members'
 * metadata); a join that would add one more is answered COORDINATOR_NOT_AVAILABLE (retriable).
 * Empty groups leave once offsets.retention.minutes have passed (offset-expiry.ts).
 */
export const GROUPS_MAX = 100_000;

export interface JoinRequest {
  readonly groupId: string;
  readonly memberId: string;
  readonly clientId: string;
  /** Where the member connects from, as Kafka shows it in DescribeGroups ("/127.0.0.1"); empty if not known. */
  readonly clientHost?: string;
  readonly sessionTimeoutMs: number;
  readonly rebalanceTimeoutMs: number;
  readonly protocolType: string;
  readonly protocols: readonly { readonly name: string; readonly metadata: Uint8Array }[];
  /** The coordinator's claim on the group (GroupOffsetStore.claim): a group held under an older one is stale and starts afresh. */
  readonly claim: CoordinatorClaim;
}

export interface JoinResult {
  readonly errorCode: number;
  readonly generationId: number;
  readonly protocolName: string;
  readonly leader: string;
  readonly memberId: string;
  /** Filled for the leader only: every member and its metadata for the chosen protocol. */
  readonly members: { readonly memberId: string; readonly metadata: Uint8Array }[];
}

/** Kafka's names of a classic group's states (Dead: no such group, never held here). */
export type GroupState = 'Empty' | 'PreparingRebalance' | 'CompletingRebalance' | 'Stable';

interface Member {
  readonly memberId: string;
  clientId: string;
  clientHost: string;
  sessionTimeoutMs: number;
  rebalanceTimeoutMs: number;
  protocolType: string;
  protocols: JoinRequest['protocols'];
  assignment: Uint8Array;
  sessionTimer: Timer | null;
  /** A join waiting for the rebalance to complete. */
  joinWaiter: ((result: JoinResult) => void) | null;
  /** A sync waiting for the leader's assignments. */
  syncWaiter: ((result: { errorCode: number; assignment: Uint8Array }) => void) | null;
}

interface Group {
  readonly id: string;
  state: GroupState;
  generationId: number;
  /** Its members' protocol type ("consumer"); kept once they are gone, as Kafka does; empty for a group never joined. */
  protocolType: string;
  protocolName: string;
  leader: string;
  readonly members: Map<string, Member>;
  rebalanceTimer: Timer | null;
  /** When the group last became Empty (clock.nowMs), or null while it has members. */
  emptySinceMs: number | null;
  /** The claim this state was built under: its members' commits are written under it, and fail once another coordinator claims the group. */
  readonly claim: CoordinatorClaim;
  /** Commits of members being written now: a rebalance completes only after them (so a new generation never reads offsets an old one is still writing). */
  commitsInFlight: number;
  /** A rebalance that came due while commits were in flight (true: by its timeout), completed once they are done; null if none. */
  completionDue: boolean | null;
  /** The rebalance under way started from Empty: it completes at its timer, not as soon as everyone joined. */
  initialDelay: boolean;
}

/**
 * What OffsetCommit may write, once the member's generation is checked: under `claim` (null: a
 * simple consumer's, which claims itself), while `recheck()` still answers NONE (the member is
 * still in the generation: asked right before the write); `done` once written.
 */
export type CommitPermit =
  | { readonly errorCode: typeof ErrorCode.NONE; readonly claim: CoordinatorClaim | null; readonly recheck: () => number; readonly done: () => void }
  | { readonly errorCode: number };

/** What offset expiry needs to know of a group: whether anyone is in it, and since when not. */
export interface GroupStatus {
  readonly members: number;
  /** When it last became empty; null while it has members. */
  readonly emptySinceMs: number | null;
}

/** A member as DescribeGroups shows it: metadata and assignment only while its group is Stable (empty otherwise, as in Kafka). */
export interface MemberSummary {
  readonly memberId: string;
  readonly clientId: string;
  readonly clientHost: string;
  readonly metadata: Uint8Array;
  readonly assignment: Uint8Array;
}

/** A group as DescribeGroups shows it: protocolName is the chosen protocol while Stable, else empty. */
export interface GroupSummary {
  readonly state: GroupState;
  readonly protocolType: string;
  readonly protocolName: string;
  readonly members: readonly MemberSummary[];
}

/** What each member supports, for OffsetDelete's subscription check: every protocol's metadata. */
export interface GroupProtocols {
  readonly protocolType: string;
  readonly members: readonly (readonly { readonly name: string; readonly metadata: Uint8Array }[])[];
}

const EMPTY = new Uint8Array(0);

/**
 * Kafka's classic group protocol, in memory: members join, the coordinator waits for all known
 * members (or the rebalance timeout), picks a protocol every member supports, gives the leader
 * the member list, hands out the leader's assignments on SyncGroup; heartbeats keep members
 * alive and learn of rebalances; a member whose session expires is removed.
 */
export class GroupCoordinator {
  readonly #clock: Clock;
  readonly #groups = new Map<string, Group>();
  /** Groups whose offsets expiry is removing: their joins wait for it (holdJoins). */
  readonly #joinsHeld = new Map<string, Promise<void>>();
  #nextMemberNumber = 0;

  constructor(clock: Clock) {
    this.#clock = clock;
  }

  /**
   * What join() would refuse `request` for before it holds any state, or NONE: checked before the
   * group is claimed, so that a request refused anyway takes the group from no other coordinator.
   */
  refusal(request: Omit<JoinRequest, 'claim'>): number {
    if (request.groupId === '') return ErrorCode.INVALID_GROUP_ID;
    if (request.sessionTimeoutMs < SESSION_TIMEOUT_MS_MIN || request.sessionTimeoutMs > SESSION_TIMEOUT_MS_MAX) return ErrorCode.INVALID_SESSION_TIMEOUT;
    if (request.memberId !== '' && this.#groups.get(request.groupId)?.members.has(request.memberId) !== true) return ErrorCode.UNKNOWN_MEMBER_ID;
    return ErrorCode.NONE;
  }

  /** Whether the group has members here (its claim then stands until a write under it is refused). */
  hasMembers(groupId: string): boolean {
    return (this.#groups.get(groupId)?.members.size ?? 0) > 0;
  }

  /**
   * Holds joins of an empty group back while its offsets are removed (offset expiry): a
   * consumer joining then would fetch offsets that vanish under it. Returns null (and holds
   * nothing) when the group has members; else the release, which the caller must call.
   */
  holdJoins(groupId: string): (() => void) | null {
    if ((this.#groups.get(groupId)?.members.size ?? 0) > 0 || this.#joinsHeld.has(groupId)) return null;
    let release!: () => void;
    this.#joinsHeld.set(groupId, new Promise<void>((resolve) => (release = resolve)));
    return () => {
      this.#joinsHeld.delete(groupId);
      release();
    };
  }

  join(request: JoinRequest): Promise<JoinResult> {
    const held = this.#joinsHeld.get(request.groupId);
    if (held !== undefined) return held.then(() => this.join(request));
    const failed = (errorCode: number, memberId = request.memberId) => Promise.resolve({ errorCode, generationId: -1, protocolName: '', leader: '', memberId, members: [] });
    const refusal = this.refusal(request);
    if (refusal !== ErrorCode.NONE && refusal !== ErrorCode.UNKNOWN_MEMBER_ID) return failed(refusal);
    this.#dropStale(request.groupId, request.claim);
    const existing = this.#groups.get(request.groupId);
    if (request.memberId !== '' && existing?.members.has(request.memberId) !== true) return failed(ErrorCode.UNKNOWN_MEMBER_ID);
    if (existing === undefined && this.#groups.size >= GROUPS_MAX) return failed(ErrorCode.COORDINATOR_NOT_AVAILABLE);
    const group = existing ?? this.#group(request.groupId, request.claim);
    if (group.members.size > 0 && !this.#compatible(group, request)) return failed(ErrorCode.INCONSISTENT_GROUP_PROTOCOL);
    if (request.memberId === '' && group.members.size >= GROUP_MEMBERS_MAX) return failed(ErrorCode.GROUP_MAX_SIZE_REACHED); // Kafka's group.max.size answer, never UNKNOWN_SERVER_ERROR
    const memberId =
      request.memberId === '' ? `${(request.clientId || 'member').slice(0, MEMBER_ID_CLIENT_PREFIX_MAX)}-${++this.#nextMemberNumber}-${this.#clock.nowMs().toString(36)}` : request.memberId;
    if (group.members.size === 0) group.protocolType = request.protocolType; // a group's type is its first member's, as in Kafka (the compatibility check holds the rest to it)
    const member = group.members.get(memberId) ?? this.#addMember(group, memberId);
    member.clientId = request.clientId;
    member.clientHost = request.clientHost ?? '';
    member.sessionTimeoutMs = request.sessionTimeoutMs;
    member.rebalanceTimeoutMs = request.rebalanceTimeoutMs;
    member.protocolType = request.protocolType;
    // Copies: the request's bytes are views of a network chunk that would stay pinned for the group's life.
    member.protocols = request.protocols.map((protocol) => ({ name: protocol.name, metadata: protocol.metadata.slice() }));
    this.#touch(group, member);
    return new Promise((resolve) => {
      member.joinWaiter?.({ errorCode: ErrorCode.REBALANCE_IN_PROGRESS, generationId: -1, protocolName: '', leader: '', memberId, members: [] });
      member.joinWaiter = resolve;
      this.#prepareRebalance(group);
      this.#maybeCompleteJoin(group);
    });
  }

  sync(groupId: string, generationId: number, memberId: string, assignments: readonly { memberId: string; assignment: Uint8Array }[]): Promise<{ errorCode: number; assignment: Uint8Array }> {
    const group = this.#groups.get(groupId);
    const member = group?.members.get(memberId);
    if (group === undefined || member === undefined) return Promise.resolve({ errorCode: ErrorCode.UNKNOWN_MEMBER_ID, assignment: EMPTY });
    if (generationId !== group.generationId) return Promise.resolve({ errorCode: ErrorCode.ILLEGAL_GENERATION, assignment: EMPTY });
    if (group.state === 'PreparingRebalance') return Promise.resolve({ errorCode: ErrorCode.REBALANCE_IN_PROGRESS, assignment: EMPTY });
    this.#touch(group, member);
    if (group.state === 'Stable') return Promise.resolve({ errorCode: ErrorCode.NONE, assignment: member.assignment });
    return new Promise((resolve) => {
      member.syncWaiter = resolve;
      if (memberId === group.leader) {
        for (const other of group.members.values()) other.assignment = assignments.find((a) => a.memberId === other.memberId)?.assignment.slice() ?? EMPTY;
        group.state = 'Stable';
        for (const other of group.members.values()) {
          other.syncWaiter?.({ errorCode: ErrorCode.NONE, assignment: other.assignment });
          other.syncWaiter = null;
        }
      }
    });
  }

  heartbeat(groupId: string, generationId: number, memberId: string): number {
    const group = this.#groups.get(groupId);
    const member = group?.members.get(memberId);
    if (group === undefined || member === undefined) return ErrorCode.UNKNOWN_MEMBER_ID;
    this.#touch(group, member);
    if (group.state === 'PreparingRebalance') return ErrorCode.REBALANCE_IN_PROGRESS;
    if (generationId !== group.generationId) return ErrorCode.ILLEGAL_GENERATION;
    return ErrorCode.NONE;
  }

  leave(groupId: string, memberId: string): number {
    const group = this.#groups.get(groupId);
    if (group === undefined || !group.members.has(memberId)) return ErrorCode.UNKNOWN_MEMBER_ID;
    this.#removeMember(group, memberId);
    return ErrorCode.NONE;
  }

  /**
   * For OffsetCommit: does this member of this generation still belong to the group? If so, the
   * permit [G3] holds the rebalance back until `done`: a generation's commit is written before the
   * next generation's members can be told their partitions (and read offsets).
   */
  beginCommit(groupId: string, generationId: number, memberId: string): CommitPermit {
    if (generationId < 0) return { errorCode: ErrorCode.NONE, claim: null, recheck: () => ErrorCode.NONE, done: () => {} }; // a simple consumer committing without a group
    const group = this.#groups.get(groupId);
    if (group === undefined || !group.members.has(memberId)) return { errorCode: ErrorCode.UNKNOWN_MEMBER_ID };
    if (!isCurrentGeneration(group, generationId)) return { errorCode: ErrorCode.ILLEGAL_GENERATION };
    if (group.state === 'PreparingRebalance') return { errorCode: ErrorCode.REBALANCE_IN_PROGRESS };
    group.commitsInFlight++;
    let done = false;
    const recheck = (): number => {
      if (this.#groups.get(groupId) !== group || !group.members.has(memberId)) return ErrorCode.UNKNOWN_MEMBER_ID;
      return isCurrentGeneration(group, generationId) ? ErrorCode.NONE : ErrorCode.ILLEGAL_GENERATION;
    };
    return {
      errorCode: ErrorCode.NONE,
      claim: group.claim,
      recheck,
      done: () => {
        if (done) return;
        done = true;
        group.commitsInFlight--;
        const due = group.completionDue;
        if (group.commitsInFlight === 0 && due !== null && this.#groups.get(groupId) === group) this.#completeJoin(group, due);
      },
    };
  }

  /**
   * The group was claimed by another coordinator (a write under `claim` was refused): its state
   * here is dropped, each waiting member told NOT_COORDINATOR (it finds the coordinator again).
   */
  drop(groupId: string, claim: CoordinatorClaim): void {
    const group = this.#groups.get(groupId);
    if (group === undefined || !sameClaim(group.claim, claim)) return;
    group.rebalanceTimer?.cancel();
    for (const member of group.members.values()) {
      member.sessionTimer?.cancel();
      member.joinWaiter?.({ errorCode: ErrorCode.NOT_COORDINATOR, generationId: -1, protocolName: '', leader: '', memberId: member.memberId, members: [] });
      member.syncWaiter?.({ errorCode: ErrorCode.NOT_COORDINATOR, assignment: EMPTY });
    }
    this.#groups.delete(groupId);
  }

  /** A group held under an older claim than the one it is joined under now lost its claim meanwhile: it starts afresh. */
  #dropStale(groupId: string, claim: CoordinatorClaim): void {
    const group = this.#groups.get(groupId);
    if (group !== undefined && !sameClaim(group.claim, claim)) this.drop(groupId, group.claim);
  }

  /** State, generation, member ids and leader, for tests (DescribeGroups uses summary). */
  describe(groupId: string): { state: GroupState; generationId: number; members: string[]; leader: string } | null {
    const group = this.#groups.get(groupId);
    return group === undefined ? null : { state: group.state, generationId: group.generationId, members: [...group.members.keys()], leader: group.leader };
  }

  /** The group as DescribeGroups shows it; null for a group not held here. */
  summary(groupId: string): GroupSummary | null {
    const group = this.#groups.get(groupId);
    if (group === undefined) return null;
    const stable = group.state === 'Stable';
    const members = [...group.members.values()].map((member) => ({
      memberId: member.memberId,
      clientId: member.clientId,
      clientHost: member.clientHost,
      metadata: stable ? (member.protocols.find((p) => p.name === group.protocolName)?.metadata ?? EMPTY) : EMPTY,
      assignment: stable ? member.assignment : EMPTY,
    }));
    return { state: group.state, protocolType: group.protocolType, protocolName: stable ? group.protocolName : '', members };
  }

  /** Every member's protocols (their metadata names the topics they subscribe to); null for a group not held here. */
  protocols(groupId: string): GroupProtocols | null {
    const group = this.#groups.get(groupId);
    return group === undefined ? null : { protocolType: group.protocolType, members: [...group.members.values()].map((member) => member.protocols) };
  }

  /** Every group held here, with members or not. */
  groupIds(): string[] {
    return [...this.#groups.keys()];
  }

  /** Whether the group has members and since when it has none; undefined for a group not held here. */
  status(groupId: string): GroupStatus | undefined {
    const group = this.#groups.get(groupId);
    return group === undefined ? undefined : { members: group.members.size, emptySinceMs: group.emptySinceMs };
  }

  /** Every group held here with no members. */
  emptyGroups(): string[] {
    return [...this.#groups.values()].filter((group) => group.members.size === 0).map((group) => group.id);
  }

  /** Drops an empty group (its offsets expired); a later join starts it afresh. A commit still being written keeps it (its write is judged against this group). */
  forget(groupId: string): void {
    const group = this.#groups.get(groupId);
    if (group === undefined || group.members.size > 0 || group.commitsInFlight > 0) return;
    group.rebalanceTimer?.cancel();
    this.#groups.delete(groupId);
  }

  get groupCount(): number {
    return this.#groups.size;
  }

  /** Cancels every timer (broker shutdown). */
  close(): void {
    for (const group of this.#groups.values()) {
      group.rebalanceTimer?.cancel();
      for (const member of group.members.values()) member.sessionTimer?.cancel();
    }
  }

  #group(groupId: string, claim: CoordinatorClaim): Group {
    let group = this.#groups.get(groupId);
    if (group === undefined) {
      group = {
        id: groupId,
        state: 'Empty',
        generationId: 0,
        protocolType: '',
        protocolName: '',
        leader: '',
        members: new Map(),
        rebalanceTimer: null,
        emptySinceMs: this.#clock.nowMs(),
        claim,
        commitsInFlight: 0,
        completionDue: null,
        initialDelay: false,
      };
      this.#groups.set(groupId, group);
    }
    return group;
  }

  #addMember(group: Group, memberId: string): Member {
    const member: Member = {
      memberId,
      clientId: '',
      clientHost: '',
      sessionTimeoutMs: 0,
      rebalanceTimeoutMs: 0,
      protocolType: '',
      protocols: [],
      assignment: EMPTY,
      sessionTimer: null,
      joinWaiter: null,
      syncWaiter: null,
    };
    group.members.set(memberId, member);
    group.emptySinceMs = null;
    return member;
  }

  #compatible(group: Group, request: JoinRequest): boolean {
    const any = group.members.values().next().value as Member;
    if (any.protocolType !== request.protocolType) return false;
    return request.protocols.some((p) => [...group.members.values()].every((m) => m.memberId === request.memberId || m.protocols.some((q) => q.name === p.name)));
  }

  /** Moves the group to PreparingRebalance; members learn of it from heartbeats or their join. */
  #prepareRebalance(group: Group): void {
    if (group.state === 'PreparingRebalance') return;
    const wasEmpty = group.state === 'Empty';
    group.state = 'PreparingRebalance';
    group.completionDue = null; // a completion deferred for an earlier rebalance is not this one's
    group.initialDelay = wasEmpty; // Kafka's initial delay: an empty group's first rebalance waits for more members
    for (const member of group.members.values()) {
      member.syncWaiter?.({ errorCode: ErrorCode.REBALANCE_IN_PROGRESS, assignment: EMPTY });
      member.syncWaiter = null;
    }
    const timeoutMs = wasEmpty ? INITIAL_REBALANCE_DELAY_MS : Math.max(...[...group.members.values()].map((m) => m.rebalanceTimeoutMs), INITIAL_REBALANCE_DELAY_MS);
    group.rebalanceTimer?.cancel();
    group.rebalanceTimer = this.#clock.setTimer(timeoutMs, () => this.#completeJoin(group, true));
  }

  /** Completes early once every member has rejoined (after the first join of an empty group, wait the delay). */
  #maybeCompleteJoin(group: Group): void {
    const everyoneJoined = [...group.members.values()].every((m) => m.joinWaiter !== null);
    if (everyoneJoined && !group.initialDelay) this.#completeJoin(group, false);
  }

  #completeJoin(group: Group, timedOut: boolean): void {
    if (group.state !== 'PreparingRebalance') return;
    group.rebalanceTimer?.cancel();
    group.rebalanceTimer = null;
    if (group.commitsInFlight > 0) {
      group.completionDue = (group.completionDue ?? false) || timedOut;
      return;
    }
    group.completionDue = null;
    if (timedOut) for (const member of [...group.members.values()]) if (member.joinWaiter === null) this.#dropMember(group, member);
    if (group.members.size === 0) {
      group.state = 'Empty';
      return;
    }
    const members = [...group.members.values()];
    const protocol = members[0]!.protocols.find((p) => members.every((m) => m.protocols.some((q) => q.name === p.name)));
    group.generationId++;
    group.protocolName = protocol?.name ?? '';
    if (!group.members.has(group.leader)) group.leader = members[0]!.memberId;
    group.state = 'CompletingRebalance';
    for (const member of members) {
      const metadataOf = (m: Member) => m.protocols.find((p) => p.name === group.protocolName)?.metadata ?? EMPTY;
      const list = member.memberId === group.leader ? members.map((m) => ({ memberId: m.memberId, metadata: metadataOf(m) })) : [];
      member.joinWaiter?.({ errorCode: ErrorCode.NONE, generationId: group.generationId, protocolName: group.protocolName, leader: group.leader, memberId: member.memberId, members: list });
      member.joinWaiter = null;
    }
  }

  /** Keeps the member alive for another session timeout. */
  #touch(group: Group, member: Member): void {
    member.sessionTimer?.cancel();
    member.sessionTimer = this.#clock.setTimer(member.sessionTimeoutMs, () => this.#removeMember(group, member.memberId));
  }

  #removeMember(group: Group, memberId: string): void {
    const member = group.members.get(memberId);
    if (member === undefined) return;
    this.#dropMember(group, member);
    if (group.members.size === 0) {
      group.rebalanceTimer?.cancel();
      group.state = 'Empty';
      return;
    }
    this.#prepareRebalance(group);
    this.#maybeCompleteJoin(group);
  }

  #dropMember(group: Group, member: Member): void {
    member.sessionTimer?.cancel();
    member.joinWaiter?.({ errorCode: ErrorCode.UNKNOWN_MEMBER_ID, generationId: -1, protocolName: '', leader: '', memberId: member.memberId, members: [] });
    member.syncWaiter?.({ errorCode: ErrorCode.UNKNOWN_MEMBER_ID, assignment: EMPTY });
    group.members.delete(member.memberId);
    if (group.members.size === 0) group.emptySinceMs = this.#clock.nowMs();
  }
}

/** Whether an OffsetCommit's generation is the group's current one (the commit may be written). */
function isCurrentGeneration(group: { readonly generationId: number }, generationId: number): boolean {
  if (regressed('commit-stale-generation')) return generationId >= group.generationId - 1;
  return generationId === group.generationId;
}
