/**
 * What the simulated clients did and saw: every request with when it started and ended (in
 * simulated ms) and what it answered, plus the faults the run injected and, at the end, what
 * each replica's log holds. The checker (checker.ts) judges a run from this alone.
 *
 * A record's value is unique in a run (`<client>/<n>`), so a record is known wherever it is read.
 */

/** How a request ended: answered (ok or a Kafka error name), or no answer (the connection died, the client gave up). */
export type Outcome = { readonly ok: true } | { readonly ok: false; readonly error: string; readonly answered: boolean };

/**
 * Who produced an answer, and when: the broker process that wrote the answer's last bytes, at the
 * moment it wrote them (noted by the simulated network at the broker's write, not at the client's
 * receipt). The broker decided what it answers no later than this, and no sooner than the op's start.
 */
export interface AnswerOrigin {
  /** The process, as `<host>#<start>` (`broker-2#3`: broker 2's third process). */
  readonly process: string;
  /** Simulated ms, on the ops' time base. */
  readonly atMs: number;
}

interface Op {
  /** The simulated client that sent it. */
  readonly client: string;
  /** The broker (node id) it was sent to. */
  readonly node: number;
  readonly startMs: number;
  readonly endMs: number;
  readonly outcome: Outcome;
}

export interface ProduceOp extends Op {
  readonly kind: 'produce';
  readonly topic: string;
  readonly partition: number;
  readonly acks: 0 | 1 | -1;
  /** Set for an idempotent producer: its id, epoch and the batch's first sequence. */
  readonly idempotence: { readonly producerId: bigint; readonly producerEpoch: number; readonly baseSequence: number } | null;
  /** The records' values in batch order. */
  readonly values: readonly string[];
  /** The acknowledged base offset (ok outcomes with acks 1 or all). */
  readonly baseOffset: number | null;
  /** Who answered, and when (answered ops of a simulated run; absent in hand-built histories and for acks 0). */
  readonly answeredBy?: AnswerOrigin;
  /** The bytes of its record batch, what producer_byte_rate counts (issue 25); absent: not known. */
  readonly batchBytes?: number;
  /** throttle_time_ms answered (issue 25); absent: no answer, or none given. */
  readonly throttleTimeMs?: number;
}

export interface ReadRecord {
  readonly offset: number;
  readonly value: string;
  /** Set when its batch carries the LogAppendTime timestamp type (config-applied); absent: CreateTime. */
  readonly logAppendTime?: true;
}

export interface FetchOp extends Op {
  readonly kind: 'fetch';
  readonly topic: string;
  readonly partition: number;
  readonly fetchOffset: number;
  /**
   * The leader epoch the fetch carried (KIP-320's currentLeaderEpoch, from the client's metadata):
   * a broker answers records only at that epoch, so it is the epoch of the leader that answered.
   * -1: the fetch named none, and any leader may have answered.
   */
  readonly leaderEpoch: number;
  readonly highWatermark: number | null;
  readonly records: readonly ReadRecord[];
  /**
   * Set (to its throttle_time_ms) when the answer was throttled and, as Kafka answers a throttled
   * fetch (KIP-219), named no partition at all: recorded ok with nothing read, it says nothing of
   * the partition (nor whether the fetch was authorized). Issue 25.
   */
  readonly throttledEmpty?: number;
  /** Who answered, and when (answered ops of a simulated run; absent in hand-built histories). */
  readonly answeredBy?: AnswerOrigin;
}

export interface CommitOp extends Op {
  readonly kind: 'commit';
  readonly group: string;
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  /** The committer asked for a lower offset than it committed before on purpose (a seek, a reset). */
  readonly reset: boolean;
  /** The generation and member the commit named (-1 and '': a simple consumer's, outside any generation). */
  readonly generationId: number;
  readonly memberId: string;
}

/**
 * A JoinGroup of the classic group protocol: the member id it asked with and what the
 * coordinator answered. Answered ok, the coordinator had completed the generation before it answered.
 */
export interface JoinGroupOp extends Op {
  readonly kind: 'join-group';
  readonly group: string;
  /** The member id sent ('' for a member new to the group). */
  readonly askedMemberId: string;
  /** The member id answered (ok, MEMBER_ID_REQUIRED); otherwise the one sent. */
  readonly memberId: string;
  /** The generation completed; -1 unless ok. */
  readonly generationId: number;
  /** The generation's leader; '' unless ok. */
  readonly leader: string;
  /** Every member of the generation, as answered to its leader (the other members are answered none). */
  readonly members: readonly string[];
}

/** A SyncGroup, Heartbeat or LeaveGroup: the member and generation it named, and what was answered. */
export interface GroupMemberOp extends Op {
  readonly kind: 'sync-group' | 'heartbeat' | 'leave-group';
  readonly group: string;
  /** The generation the request carried (LeaveGroup names none: -1). */
  readonly generationId: number;
  readonly memberId: string;
}

/** A request of the group protocol's membership (its commits and fetches of offsets are partition ops). */
export type GroupOp = JoinGroupOp | GroupMemberOp;

export interface OffsetFetchOp extends Op {
  readonly kind: 'offset-fetch';
  readonly group: string;
  readonly topic: string;
  readonly partition: number;
  /** -1: no offset committed. */
  readonly offset: number;
}

export interface AdminOp extends Op {
  readonly kind: 'create-topic' | 'delete-topic';
  readonly topic: string;
  readonly partitions: number;
  readonly replicationFactor: number;
}

/** A DeleteRecords of one partition (issue 12): the log start is to move up to `offset` (-1: the high watermark). */
export interface DeleteRecordsOp extends Op {
  readonly kind: 'delete-records';
  readonly topic: string;
  readonly partition: number;
  /** The offset asked for; -1: the high watermark. */
  readonly offset: number;
  /** The low watermark answered (the log start after the delete); null unless ok. */
  readonly lowWatermark: number | null;
}

/** A CreatePartitions of one topic (issue 12): its partition count grows to `count`. */
export interface CreatePartitionsOp extends Op {
  readonly kind: 'create-partitions';
  readonly topic: string;
  /** The new total count asked for. */
  readonly count: number;
}

/** An IncrementalAlterConfigs of one topic (issue 12): each config SET to its value, or DELETEd (null: back to its default). */
export interface AlterConfigsOp extends Op {
  readonly kind: 'alter-configs';
  readonly topic: string;
  readonly configs: readonly { readonly name: string; readonly value: string | null }[];
}

/** A Metadata answer: the partition count of every topic it named without an error, and the errors it named. */
export interface MetadataOp extends Op {
  readonly kind: 'metadata';
  readonly topics: readonly { readonly name: string; readonly partitions: number }[];
  /** Each topic-level error (partition null) and partition-level error of the answer (answer-allowed); absent: none recorded. */
  readonly errors?: readonly MetadataError[];
}

/** An error a Metadata answer named: for a whole topic (partition null) or for one of its partitions. */
export interface MetadataError {
  readonly topic: string;
  readonly partition: number | null;
  /** Kafka's error name. */
  readonly error: string;
}

/**
 * A request whose answer no other op records: the group APIs (FindCoordinator, JoinGroup,
 * SyncGroup, Heartbeat, LeaveGroup) and InitProducerId. Only its outcome is judged
 * (answer-allowed): what the group did is judged through commits and offset fetches.
 */
export interface RequestOp extends Op {
  readonly kind: 'request';
  /** Kafka's name of the API. */
  readonly api: string;
  /** The group it names (the group APIs); null for InitProducerId. */
  readonly group: string | null;
}

/** A ListOffsets of one partition (the consumers ask for the earliest offset, timestamp -2). */
export interface ListOffsetsOp extends Op {
  readonly kind: 'list-offsets';
  readonly topic: string;
  readonly partition: number;
  readonly timestamp: number;
  /** The offset answered; null unless ok. */
  readonly offset: number | null;
}

/**
 * A legitimate client's SASL exchange on a connection it opened (issue 13, secured runs): the
 * first, or a re-authentication (KIP-368) late in the session. `node`: the broker (-1: known only by
 * its bootstrap address).
 */
export interface AuthenticateOp extends Op {
  readonly kind: 'authenticate';
  readonly mechanism: string;
  /** SaslHandshake v0 (tokens as bare frames) or v1 (tokens in SaslAuthenticate). */
  readonly handshakeVersion: 0 | 1;
  readonly reauthentication: boolean;
  /** session_lifetime_ms answered (0: the session does not end, or v0). */
  readonly sessionLifetimeMs: number;
  /**
   * Which of its user's credentials of this mechanism it used (issue 25): 0, the one written
   * before the brokers started (PLAIN's never change), or the one a ScramChangeOp set. Absent: 0.
   */
  readonly credential?: number;
}

/**
 * What an intruder is (issue 13): a wrong password, a user no broker knows, a mechanism no
 * listener enables, no authentication at all, a valid user that no ACL names, or a valid user
 * (with ACLs) whose session expired (connections.max.reauth.ms) without a re-authentication.
 */
export type IntruderKind = 'wrong-password' | 'unknown-user' | 'bad-mechanism' | 'unauthenticated' | 'no-acl' | 'expired-session';

/** Intruders whose connections must never authenticate: nothing they send past the SASL exchange may be answered. */
export const UNAUTHENTICATED_INTRUDERS: ReadonlySet<IntruderKind> = new Set(['wrong-password', 'unknown-user', 'bad-mechanism', 'unauthenticated']);

/**
 * One request of an intruder and what came back. `authentication`: part of its SASL exchange
 * (SaslHandshake, SaslAuthenticate, a v0 bare token: one op for the whole exchange, ok only if it
 * completed) or ApiVersions; else a data API it has no right to. An expired-session intruder
 * sends its data requests only once its session ended (`sessionEndedMs`).
 */
export interface IntruderOp extends Op {
  readonly kind: 'intruder';
  readonly intruder: IntruderKind;
  /** Kafka's name of the API sent (SaslAuthenticate for a whole exchange, v0 included). */
  readonly api: string;
  /** The SASL mechanism of an exchange (SaslAuthenticate, SaslHandshake); null for other requests. */
  readonly mechanism: string | null;
  readonly authentication: boolean;
  /** The listener it connected to. */
  readonly listener: string;
  /** What the request named. */
  readonly topic: string | null;
  readonly partition: number | null;
  readonly group: string | null;
  /** Values it tried to produce (`<intruder>/<n>`, unique in the run). */
  readonly values: readonly string[];
  /** The offset it tried to commit (never one a legitimate consumer reaches). */
  readonly committedOffset: number | null;
  /** What the answer carried that it must never receive: records, topics named without error, committed offsets. */
  readonly records: readonly ReadRecord[];
  readonly topics: readonly string[];
  readonly offsets: readonly number[];
  /** The broker's error message, for a refused exchange (auth-refused compares unknown users with wrong passwords). */
  readonly errorMessage: string | null;
}

/** One ACL the admin created or deleted (CreateAcls, DeleteAcls with a filter matching exactly it). */
export interface AclChangeOp extends Op {
  readonly kind: 'create-acl' | 'delete-acl';
  /** `User:<name>`, or `User:*` (every principal). */
  readonly principal: string;
  readonly resourceType: SimResourceType;
  readonly resourceName: string;
  readonly patternType: 'literal' | 'prefixed';
  /** Kafka's operation name: READ, WRITE, DESCRIBE, IDEMPOTENT_WRITE, ... */
  readonly operation: string;
  readonly permission: 'allow' | 'deny';
}

/**
 * One change of a user's SCRAM credential of one mechanism (AlterUserScramCredentials, issue 25):
 * a new one set (its number, from 1 up: the clients use it once the change is answered ok), or the
 * credential deleted. A retry of a change repeats its number.
 */
export interface ScramChangeOp extends Op {
  readonly kind: 'alter-scram';
  readonly user: string;
  /** SCRAM-SHA-256 or SCRAM-SHA-512. */
  readonly mechanism: string;
  /** The credential set; null: the user's credential of this mechanism deleted. */
  readonly credential: number | null;
}

/** A user's client quota set (a bound) or removed (null) with AlterClientQuotas (issue 25): `/users/<user>`, one key. */
export interface QuotaChangeOp extends Op {
  readonly kind: 'alter-quota';
  readonly user: string;
  /** producer_byte_rate, consumer_byte_rate or request_percentage. */
  readonly key: string;
  readonly value: number | null;
}

/**
 * An answer that carried a throttle time (a client quota, KIP-219, issue 25), told by the client
 * once the throttle ended: when it was answered (startMs = endMs), for how long, and when the
 * client's next request went out on that connection.
 */
export interface ThrottleOp extends Op {
  readonly kind: 'throttle';
  /** Kafka's name of the API answered. */
  readonly api: string;
  readonly throttleMs: number;
  /** How long after the answer the client's next request went out on that connection; null: none while the throttle ran. */
  readonly nextSentAfterMs: number | null;
}

/** A resource an ACL names, as the history names its type (the cluster's one name is `kafka-cluster`). */
export type SimResourceType = 'topic' | 'group' | 'cluster' | 'transactional-id';

/** The APIs the access prober sends (issue 25): each asks the authorizer about one resource and changes nothing. */
export type AccessProbeApi =
  | 'FindCoordinator'
  | 'DescribeGroups'
  | 'DescribeConfigs'
  | 'IncrementalAlterConfigs'
  | 'CreateTopics'
  | 'ListOffsets'
  | 'Metadata'
  | 'DescribeAcls'
  | 'DescribeClientQuotas'
  | 'AlterClientQuotas'
  | 'InitProducerId';

/**
 * A request of the access prober (issue 25), a user whose rights only ACLs the run draws give:
 * one API about one resource (a topic, a group, a transactional id, or the cluster), sent only to
 * see whether the broker lets it through (alterations and creates are validate_only).
 */
export interface AccessProbeOp extends Op {
  readonly kind: 'access-probe';
  readonly api: AccessProbeApi;
  readonly resourceType: SimResourceType;
  readonly resourceName: string;
}

export type ClientOp =
  | ProduceOp
  | FetchOp
  | CommitOp
  | OffsetFetchOp
  | JoinGroupOp
  | GroupMemberOp
  | AdminOp
  | DeleteRecordsOp
  | CreatePartitionsOp
  | AlterConfigsOp
  | MetadataOp
  | ListOffsetsOp
  | AuthenticateOp
  | IntruderOp
  | AclChangeOp
  | RequestOp
  | AccessProbeOp
  | ScramChangeOp
  | QuotaChangeOp
  | ThrottleOp;

/** An op on one partition of a topic incarnation (the history index files it under that partition). */
export type PartitionOp = ProduceOp | FetchOp | CommitOp | OffsetFetchOp | DeleteRecordsOp | ListOffsetsOp;

const PARTITION_OP_KINDS: ReadonlySet<ClientOp['kind']> = new Set(['produce', 'fetch', 'commit', 'offset-fetch', 'delete-records', 'list-offsets']);

/** Ops of the security paths (issues 13, 25), judged by their own invariants only. */
export type SecurityOp = AuthenticateOp | IntruderOp | AclChangeOp | AccessProbeOp | ScramChangeOp | QuotaChangeOp | ThrottleOp;

/** An ACL create or delete (their kind is a union, so `kind !==` one literal does not narrow). */
export function isAclChangeOp(op: ClientOp): op is AclChangeOp {
  return op.kind === 'create-acl' || op.kind === 'delete-acl';
}

export function isSecurityOp(op: ClientOp): op is SecurityOp {
  return (
    op.kind === 'authenticate' ||
    op.kind === 'intruder' ||
    op.kind === 'create-acl' ||
    op.kind === 'delete-acl' ||
    op.kind === 'access-probe' ||
    op.kind === 'alter-scram' ||
    op.kind === 'alter-quota' ||
    op.kind === 'throttle'
  );
}

/** An op on a whole topic that does not start or end an incarnation (CreatePartitions, configs). */
export type TopicChangeOp = CreatePartitionsOp | AlterConfigsOp;

export function isTopicChangeOp(op: ClientOp): op is TopicChangeOp {
  return op.kind === 'create-partitions' || op.kind === 'alter-configs';
}

/** Whether an op names one partition (not a topic-wide admin op, not Metadata, not a security op). */
export function isPartitionOp(op: ClientOp): op is PartitionOp {
  return PARTITION_OP_KINDS.has(op.kind);
}

/** A request of the group protocol's membership: JoinGroup, SyncGroup, Heartbeat, LeaveGroup. */
export function isGroupOp(op: ClientOp): op is GroupOp {
  return op.kind === 'join-group' || op.kind === 'sync-group' || op.kind === 'heartbeat' || op.kind === 'leave-group';
}

/** A topic create or delete (their kind is a union, so `kind !==` one literal does not narrow). */
export function isAdminOp(op: ClientOp): op is AdminOp {
  return op.kind === 'create-topic' || op.kind === 'delete-topic';
}

/** A fault the run injected (or healed), for the trace printed with a violation. */
export interface FaultEvent {
  readonly kind: 'fault';
  readonly atMs: number;
  readonly fault: string;
  readonly target: string;
}

/** One replica's whole log of a partition at the end of the run, after faults stopped. */
export interface ReplicaLog {
  readonly node: number;
  readonly topic: string;
  readonly partition: number;
  /** Whether this broker leads the partition at the end. */
  readonly leader: boolean;
  /** Where the log's local batches start (at or above the client start: below it nothing may be read). */
  readonly logStartOffset: number;
  /**
   * The log start a fetch answers (clients read nothing below it): DeleteRecords' start, or below
   * the local log the tier's. Absent (hand-built histories): logStartOffset.
   */
  readonly clientStartOffset?: number;
  readonly logEndOffset: number;
  readonly highWatermark: number;
  /** The log's batches, byte for byte (views are fine: the run is over). */
  readonly batches: readonly { readonly baseOffset: number; readonly lastOffset: number; readonly bytes: Uint8Array }[];
  readonly records: readonly ReadRecord[];
}

/** A batch of a log, byte for byte. */
export type LogBatch = ReplicaLog['batches'][number];

/** One `copied` entry of a partition's final tier record, and what its object holds (read at the end, without faults). */
export interface TieredSegment {
  readonly baseOffset: number;
  /** Exclusive. */
  readonly endOffset: number;
  readonly uploadId: string;
  /** The leader epoch the entry was announced (and committed) in. */
  readonly leaderEpoch: number;
  /** Whether it is in the run of copied segments from the record's start (what readers and rebuilds use). */
  readonly counted: boolean;
  /** The object's batches as decoded (every section's checksum held); empty when `problem` says why not. */
  readonly batches: readonly LogBatch[];
  readonly records: readonly ReadRecord[];
  /** Why the object could not be read whole (missing, a checksum, batches not [base, end)); null when it was. */
  readonly problem: string | null;
}

/** The tier of one partition of a final topic at the end of the run: its tier record's start and its copied segments, by base offset. */
export interface TieredPartition {
  readonly topic: string;
  readonly partition: number;
  readonly topicId: string;
  /** The record's start (LS; retention raises it). */
  readonly startOffset: number;
  /** TE: where the counted segments end. */
  readonly tieredEnd: number;
  readonly segments: readonly TieredSegment[];
}

/**
 * A write of a tier record that took effect in the store, in the store's order (recorded by the
 * harness at the store, a write whose answer was lost included): the record's history (tier-fenced).
 */
export interface TierRecordWrite {
  readonly topicId: string;
  readonly partition: number;
  /** Simulated ms, on the ops' time base. */
  readonly atMs: number;
  /** The record's leaderEpoch as written: the epoch of the leader that wrote it (TI2). */
  readonly leaderEpoch: number;
  readonly segments: readonly { readonly baseOffset: number; readonly endOffset: number; readonly uploadId: string; readonly leaderEpoch: number; readonly state: 'copying' | 'copied' }[];
  /** [T8] The merge announced in this version, if any (its upload id becomes a copied entry on commit). */
  readonly merging?: { readonly baseOffset: number; readonly endOffset: number; readonly uploadId: string; readonly leaderEpoch: number };
}

/** A record found in a WAL object at the end of the run, and when a write of that object first came back from the store (no writer knew of it before). */
export interface WalRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  readonly value: string;
  readonly settledMs: number;
}

/**
 * A replica's log end offset changing: recorded by the harness after every event (never by the
 * broker), from the engines, for every partition a broker serves as leader or follower. The first
 * of a node's partition is its first value; a partition the node stops serving records nothing.
 */
export interface ReplicaEnd {
  readonly node: number;
  readonly topic: string;
  readonly partition: number;
  /** Simulated ms, on the ops' time base. */
  readonly atMs: number;
  readonly logEndOffset: number;
}

/**
 * A retention pass that deleted the oldest local segments of a replica's log (recorded by the
 * harness through the engine's `onRetention`, leader or follower): its log started at
 * `fromOffset` and starts at `toOffset` after it.
 */
export interface RetentionDelete {
  readonly node: number;
  readonly topic: string;
  readonly partition: number;
  /** Simulated ms, on the ops' time base. */
  readonly atMs: number;
  readonly fromOffset: number;
  readonly toOffset: number;
  /** The log's end then. */
  readonly logEndOffset: number;
  /** The bytes of the segment files left, as the harness read them off the disk then; absent: not measured (StoredBatches sizes them). */
  readonly keptBytes?: number;
  /** The tiered end it deleted below by local.retention.* (a leader that tiers); null: by retention.*. */
  readonly tieredEnd: number | null;
}

/** The retention every topic starts with (the brokers' defaults, before any alter). */
export interface RetentionDefaults {
  /** retention.bytes (-1: no limit) and retention.ms (-1: none). */
  readonly bytes: number;
  readonly ms: number;
  /** local.retention.bytes and local.retention.ms (-2: as retention.*). */
  readonly localBytes: number;
  readonly localMs: number;
}

/** Liveness probes after faults stopped: a write and a read-back per partition, and how long each took to succeed. */
export interface ProbeResult {
  readonly topic: string;
  readonly partition: number;
  /** Simulated ms from the end of faults to the first acknowledged acks=all write, or null if none within the bound. */
  readonly writeAfterMs: number | null;
  readonly readAfterMs: number | null;
}

/** The run's shape, for invariants that depend on it (acks-resume-with-quorum). */
export interface RunShape {
  /** Node ids are 1..brokers. */
  readonly brokers: number;
  /** false: one broker alone (`ferry broker`), no leases. */
  readonly cluster: boolean;
  readonly replicationFactor: number;
  readonly minInsyncReplicas: number;
  readonly leaseMs: number;
  readonly scanIntervalMs: number;
}

/**
 * A broker's health changing. Healthy: its process serves, is not paused, reaches both stores and
 * the network, and its disk has room. Times are simulated ms on the ops' time base. Every node is
 * unhealthy at the run's start until its first `healthy: true`; a repeat of the current state is
 * no change.
 */
export interface HealthChange {
  readonly node: number;
  readonly atMs: number;
  readonly healthy: boolean;
}

/**
 * A broker becoming stranded or no longer so: its process runs and reaches the control store, but
 * it is cut from every other host, clients included. It keeps its lease, so it keeps leading what
 * it leads, as a Kafka broker that still heartbeats to its controller keeps its leadership however
 * few clients reach it. Times as in HealthChange; every node starts not stranded.
 */
export interface StrandedChange {
  readonly node: number;
  readonly atMs: number;
  readonly stranded: boolean;
}

export interface History {
  readonly seed: number;
  /** When the run started (simulated ms): a violation's trace prints times relative to it (default: the earliest event). */
  readonly startMs?: number;
  readonly ops: ClientOp[];
  readonly faults: FaultEvent[];
  readonly replicaLogs: ReplicaLog[];
  /** Every record the WAL store holds at the end (ack-after-durable); null when not audited. */
  readonly walRecords: readonly WalRecord[] | null;
  /** Every replica's log end over the run (acks-all-min-insync); null when not recorded. */
  readonly replicaEnds: readonly ReplicaEnd[] | null;
  readonly probes: ProbeResult[];
  /** When faults stopped (simulated ms), and the bound within which probes must succeed. */
  readonly quietFromMs: number;
  readonly livenessBoundMs: number;
  /** The run's shape. */
  readonly shape: RunShape;
  /** Each broker's health changes, in any order (the checker sorts them). */
  readonly health: readonly HealthChange[];
  /** Each broker's spells of being stranded, as changes in any order; absent: none. */
  readonly stranded?: readonly StrandedChange[];
  /** The tier of every partition of the final topics at the end; absent: the run did not tier. */
  readonly tiered?: readonly TieredPartition[];
  /** Every tier record write, in the store's order; absent: the run did not tier. */
  readonly tierWrites?: readonly TierRecordWrite[];
  /** Every WAL object delete that took effect, in the store's order, with the store as it was then; absent: the run did not tier. */
  readonly walDeletes?: readonly WalDelete[];
  /** Absent: the run was not secured (PLAINTEXT, no authorizer). */
  readonly security?: SecurityShape;
  /** The brokers' leases and partition claims as the control store took them; absent: not recorded. */
  readonly leases?: LeaseHistory;
  /** Every retention pass that deleted segments, in the order they ran; absent: not recorded. */
  readonly retentionDeletes?: readonly RetentionDelete[];
  /** The topics' retention before any alter; absent: Kafka's defaults (RETENTION_DEFAULTS in retention-kept.ts). */
  readonly retentionDefaults?: RetentionDefaults;
  /**
   * The wall clock (ms since the epoch) at the ops' time 0, as the clients' clock and an unskewed
   * broker's read it: record timestamps are on it. Absent: 0 (hand-built histories).
   */
  readonly wallClockAtZeroMs?: number;
}

/**
 * What leader-within-lease judges by (recorded by `lease-writes.ts` at the store and at each
 * process's store view, and by `clock-rates.ts`): every write of a broker record and of a partition
 * record that took effect in the control store, in the store's order, each with the process that
 * sent it and when it was sent.
 */
export interface LeaseHistory {
  readonly renewals: readonly LeaseRenewal[];
  readonly partitionWrites: readonly PartitionRecordWrite[];
  /** Each broker process's largest clock-rate error (|rate - 1|, monotonic ms per simulated ms) over its life. */
  readonly clockRateErrors: Readonly<Record<string, number>>;
}

/** A write of a broker record (docs/cluster-protocol.md [C1]: a lease renewal, or a resignation) that the store took. */
export interface LeaseRenewal {
  /** The process that sent it (AnswerOrigin's names). */
  readonly process: string;
  readonly node: number;
  /** Simulated ms, on the ops' time base: when the process sent this write, and when the store took it. */
  readonly sentMs: number;
  readonly takenMs: number;
  /** The record's leaseMs. */
  readonly leaseMs: number;
  /** renewedAtMs 0: a clean stop cleared the lease (others count the broker dead at once). */
  readonly resigned: boolean;
}

/** A write of a partition record (a claim [C3], or its leader noting `settled` or the log start) that the store took. */
export interface PartitionRecordWrite {
  readonly process: string;
  readonly topic: string;
  readonly partition: number;
  readonly leader: number;
  readonly leaderEpoch: number;
  /** Simulated ms, on the ops' time base. */
  readonly takenMs: number;
}

/** A secured run (issue 13): who each client is, and how ACL changes reach the brokers. */
export interface SecurityShape {
  /** Each legitimate client's user (its principal is User:<user>); intruders are not listed. */
  readonly users: Readonly<Record<string, string>>;
  /** super.users, by user name: allowed everything, whatever the ACLs say. */
  readonly superUsers: readonly string[];
  /** allow.everyone.if.no.acl.found (absent: false, Kafka's default): a resource no ACL names is open to all. */
  readonly allowEveryoneIfNoAclFound?: boolean;
  /**
   * How long after an ACL change was answered a broker healthy all along applies it (each
   * broker reads the ACL records again every second; a slow or failed read is tried again).
   */
  readonly aclPropagationMs: number;
  /** connection.failed.authentication.delay.ms: a refusal is answered no sooner (docs/security.md [A6]). */
  readonly failedAuthenticationDelayMs: number;
}

/**
 * A delete of a WAL object that took effect in the store (recorded by the harness at the store,
 * `src/sim/wal-gc.ts`), with what the store held at that moment: what wal-gc-needed judges.
 */
export interface WalDelete {
  /** Simulated ms, on the ops' time base. */
  readonly atMs: number;
  readonly writerId: string;
  readonly epoch: number;
  readonly sequence: number;
  /** What the deleted object was; `unreadable`: its header did not decode. */
  readonly kind: 'data' | 'seal' | 'unreadable';
  /** The stream's other sequences still present at that moment (sorted), and which of them are seals. */
  readonly present: readonly number[];
  readonly seals: readonly number[];
  /** The stream's highest floor mark at that moment (0: none): GC marks before it deletes below ([G4]); a seal below it is void ([F2]). */
  readonly floorMark: number;
  /** The deleted object's frames, each with its partition's tier end and its incarnation's existence at that moment. */
  readonly frames: readonly WalDeletedFrame[];
}

export interface WalDeletedFrame {
  readonly topic: string;
  readonly topicId: string;
  readonly partition: number;
  readonly lastOffset: number;
  /** TE of the partition's tier record as the store held it (0 without a record). */
  readonly tieredEnd: number;
  /** Whether the incarnation's deletion record stood in the control store (DI1: only it lets a frame go for its incarnation's sake). */
  readonly incarnationDeleted: boolean;
}
