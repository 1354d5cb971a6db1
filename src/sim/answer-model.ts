import { MIN_INSYNC_REPLICAS } from './config-timeline.ts';
/**
 * What each request of the simulated clients may be answered: per Kafka API, the errors Kafka
 * answers it with (its protocol's documented errors: the `Possible error codes` of each response
 * class in clients/src/main/java/org/apache/kafka/common/requests, and what the Java client's
 * handlers expect: Sender, TransactionManager, AbstractCoordinator, ConsumerCoordinator), narrowed
 * by what the history knows of the run and the request. Each error Kafka documents for an API is
 * either allowed (always, or only when its condition holds) or excluded with the reason why the
 * simulated clients' requests never get it. An error in neither list is not one Kafka answers that
 * API with at all. answer-allowed (invariants/answer-allowed.ts) holds every recorded answer to it.
 */
import type { ClientOp, History } from './history.ts';

/** What the model reads of a run (once per history). */
export interface RunFacts {
  /** An authorizer runs (issue 13): only then is any authorization error an answer. */
  readonly secured: boolean;
  /**
   * The most min.insync.replicas any topic may have had: the run's, or a value an alter asked for
   * (config-change-load.ts; answered or not, it may have taken effect).
   */
  readonly minInsyncReplicas: number;
  /** When the first clock-skew fault was injected (Infinity: none). */
  readonly clockSkewFromMs: number;
}

/** The ops the model judges: every answer of a legitimate client outside the SASL exchange (auth-accepted judges those; intruders have their own invariants). */
export type JudgedOp = Exclude<ClientOp, { kind: 'authenticate' | 'intruder' }>;

/** When an allowed error may be answered: always, or only for some requests of some runs. */
type When = (op: JudgedOp, run: RunFacts) => boolean;

interface ApiAnswers {
  /** Errors the API may be answered with, and when. */
  readonly allowed: Readonly<Record<string, When>>;
  /** Errors Kafka documents for the API that the simulated clients' requests never get, and why. */
  readonly excluded: Readonly<Record<string, string>>;
}

const always: When = () => true;
/** Authorization errors: only where an authorizer runs (the ACLs themselves are acl-enforced's to judge). */
const secured: When = (_op, run) => run.secured;
/** The sequence and epoch checks run only on an idempotent producer's batches. */
const idempotent: When = (op) => op.kind === 'produce' && op.idempotence !== null;
/** Kafka checks min.insync.replicas only for acks=all, and only a replica count below it fails (the leader counts: 1 never does). */
const acksAllQuorum: When = (op, run) => op.kind === 'produce' && op.acks === -1 && run.minInsyncReplicas > 1;
/**
 * A broker refuses a CreateTime more than log.message.timestamp.after.max.ms (1 h) ahead of its
 * clock; the clients stamp simulated time, so only a broker whose clock a clock-skew fault set back
 * could refuse one.
 */
const clockSkewed: When = (op, run) => op.endMs >= run.clockSkewFromMs;

const UNKNOWN_SERVER_ERROR = 'never: an unexpected error inside the broker (a bug), whatever the request';
const WELL_FORMED = 'never: the simulated clients send well-formed requests and batches';
const NO_TRANSACTIONS = 'never: the simulated clients use no transactions';
const NO_STATIC_MEMBERS = 'never: the simulated consumers are dynamic members (no group.instance.id)';
const CLASSIC_GROUPS = 'never: the simulated consumers use the classic group protocol (errors of KIP-848 groups)';

/** The group APIs' coordinator errors (Kafka's CoordinatorOperationExceptionHelper maps store failures to these). */
const COORDINATOR_ERRORS: Readonly<Record<string, When>> = {
  COORDINATOR_LOAD_IN_PROGRESS: always,
  COORDINATOR_NOT_AVAILABLE: always,
  NOT_COORDINATOR: always,
  GROUP_AUTHORIZATION_FAILED: secured,
};

/** Keyed by Kafka's API name. */
export const API_ANSWERS: Readonly<Record<string, ApiAnswers>> = {
  Produce: {
    allowed: {
      UNKNOWN_TOPIC_OR_PARTITION: always,
      NOT_LEADER_OR_FOLLOWER: always,
      LEADER_NOT_AVAILABLE: always,
      REQUEST_TIMED_OUT: always,
      KAFKA_STORAGE_ERROR: always,
      NOT_ENOUGH_REPLICAS: acksAllQuorum,
      NOT_ENOUGH_REPLICAS_AFTER_APPEND: acksAllQuorum,
      TOPIC_AUTHORIZATION_FAILED: secured,
      OUT_OF_ORDER_SEQUENCE_NUMBER: idempotent,
      INVALID_PRODUCER_EPOCH: idempotent,
      INVALID_TIMESTAMP: clockSkewed,
    },
    excluded: {
      CORRUPT_MESSAGE: WELL_FORMED,
      INVALID_RECORD: WELL_FORMED,
      INVALID_REQUIRED_ACKS: 'never: the simulated producers ask for acks 0, 1 or all',
      INVALID_TOPIC_EXCEPTION: 'never: the simulated topics have valid names',
      MESSAGE_TOO_LARGE: 'never: the simulated batches are far below max.message.bytes (the admin only raises it)',
      RECORD_LIST_TOO_LARGE: 'never: the simulated batches are far below max.message.bytes',
      UNSUPPORTED_FOR_MESSAGE_FORMAT: 'never: the simulated producers write record batches (magic 2) at Produce v8',
      UNSUPPORTED_VERSION: 'never: Produce v8 is served (only v0-v2 are refused, KIP-896)',
      CLUSTER_AUTHORIZATION_FAILED: 'never: Kafka 4 checks no IDEMPOTENT_WRITE on Produce (InitProducerId authorized the producer)',
      TRANSACTIONAL_ID_AUTHORIZATION_FAILED: NO_TRANSACTIONS,
      INVALID_TXN_STATE: NO_TRANSACTIONS,
      INVALID_PRODUCER_ID_MAPPING: NO_TRANSACTIONS,
      UNKNOWN_PRODUCER_ID: 'never: since Kafka 2.5 (KIP-360) a broker that does not know a producer accepts it at any sequence',
      DUPLICATE_SEQUENCE_NUMBER: "never: a Kafka 4 broker answers a retry within the producer's last five batches ok at the original offset, and one older than them OUT_OF_ORDER_SEQUENCE_NUMBER",
      UNKNOWN_SERVER_ERROR,
    },
  },
  Fetch: {
    allowed: {
      OFFSET_OUT_OF_RANGE: always,
      NOT_LEADER_OR_FOLLOWER: always,
      FENCED_LEADER_EPOCH: always,
      UNKNOWN_LEADER_EPOCH: always,
      UNKNOWN_TOPIC_OR_PARTITION: always,
      KAFKA_STORAGE_ERROR: always,
      TOPIC_AUTHORIZATION_FAILED: secured,
    },
    excluded: {
      REPLICA_NOT_AVAILABLE: 'never: only brokers older than 2.6 answered it',
      CORRUPT_MESSAGE: 'never: the log holds only checked batches (a store read that fails its checksum is KAFKA_STORAGE_ERROR)',
      UNSUPPORTED_COMPRESSION_TYPE: 'never: Fetch v11 takes every compression type',
      UNKNOWN_TOPIC_ID: 'never: Fetch v11 names topics by name',
      INCONSISTENT_TOPIC_ID: 'never: Fetch v11 names topics by name',
      FETCH_SESSION_TOPIC_ID_ERROR: 'never: Fetch v11 names topics by name',
      FETCH_SESSION_ID_NOT_FOUND: 'never: the simulated consumers open no fetch session',
      INVALID_FETCH_SESSION_EPOCH: 'never: the simulated consumers open no fetch session',
      UNKNOWN_SERVER_ERROR,
    },
  },
  ListOffsets: {
    allowed: {
      NOT_LEADER_OR_FOLLOWER: always,
      LEADER_NOT_AVAILABLE: always,
      UNKNOWN_TOPIC_OR_PARTITION: always,
      KAFKA_STORAGE_ERROR: always,
      TOPIC_AUTHORIZATION_FAILED: secured,
    },
    excluded: {
      FENCED_LEADER_EPOCH: 'never: the simulated consumers send no current leader epoch (-1), so none is checked',
      UNKNOWN_LEADER_EPOCH: 'never: the simulated consumers send no current leader epoch (-1), so none is checked',
      OFFSET_NOT_AVAILABLE: 'never: ListOffsets v5+ only',
      UNSUPPORTED_FOR_MESSAGE_FORMAT: 'never: the logs hold record batches (magic 2)',
      REPLICA_NOT_AVAILABLE: 'never: only brokers older than 2.6 answered it',
      UNKNOWN_SERVER_ERROR,
    },
  },
  Metadata: {
    allowed: {
      UNKNOWN_TOPIC_OR_PARTITION: always,
      LEADER_NOT_AVAILABLE: always,
      TOPIC_AUTHORIZATION_FAILED: secured,
    },
    excluded: {
      INVALID_TOPIC_EXCEPTION: 'never: the simulated topics have valid names',
      REPLICA_NOT_AVAILABLE: 'never: Metadata v8 answers a partition with a replica offline without an error',
      LISTENER_NOT_FOUND: 'never: every broker serves the listener the clients connect to',
      UNKNOWN_SERVER_ERROR,
    },
  },
  OffsetCommit: {
    allowed: {
      ...COORDINATOR_ERRORS,
      UNKNOWN_TOPIC_OR_PARTITION: always,
      REQUEST_TIMED_OUT: always,
      ILLEGAL_GENERATION: always,
      UNKNOWN_MEMBER_ID: always,
      REBALANCE_IN_PROGRESS: always,
      GROUP_ID_NOT_FOUND: always,
      TOPIC_AUTHORIZATION_FAILED: secured,
    },
    excluded: {
      OFFSET_METADATA_TOO_LARGE: 'never: the simulated consumers commit no metadata',
      INVALID_COMMIT_OFFSET_SIZE: WELL_FORMED,
      INVALID_PRODUCER_ID_MAPPING: NO_TRANSACTIONS,
      INVALID_TXN_STATE: NO_TRANSACTIONS,
      STALE_MEMBER_EPOCH: CLASSIC_GROUPS,
      KAFKA_STORAGE_ERROR: 'never: Kafka answers a failed offsets write as a coordinator error (CoordinatorOperationExceptionHelper: NOT_COORDINATOR)',
      UNKNOWN_SERVER_ERROR,
    },
  },
  OffsetFetch: {
    allowed: { ...COORDINATOR_ERRORS, UNKNOWN_TOPIC_OR_PARTITION: always, TOPIC_AUTHORIZATION_FAILED: secured },
    excluded: {
      UNSTABLE_OFFSET_COMMIT: 'never: the simulated consumers do not ask for stable offsets (OffsetFetch v7+)',
      UNKNOWN_MEMBER_ID: 'never: OffsetFetch v9+ only',
      STALE_MEMBER_EPOCH: CLASSIC_GROUPS,
      UNKNOWN_SERVER_ERROR,
    },
  },
  FindCoordinator: {
    allowed: { COORDINATOR_LOAD_IN_PROGRESS: always, COORDINATOR_NOT_AVAILABLE: always, GROUP_AUTHORIZATION_FAILED: secured },
    excluded: {
      INVALID_REQUEST: WELL_FORMED,
      TRANSACTIONAL_ID_AUTHORIZATION_FAILED: 'never: the simulated clients look up group coordinators only',
      UNKNOWN_SERVER_ERROR,
    },
  },
  JoinGroup: {
    allowed: { ...COORDINATOR_ERRORS, UNKNOWN_MEMBER_ID: always, MEMBER_ID_REQUIRED: always, REBALANCE_IN_PROGRESS: always },
    excluded: {
      INCONSISTENT_GROUP_PROTOCOL: 'never: every simulated member joins with protocol type consumer and the roundrobin assignor',
      INVALID_SESSION_TIMEOUT: "never: the simulated session timeout lies within the broker's bounds",
      INVALID_GROUP_ID: 'never: the simulated group ids are not empty',
      GROUP_MAX_SIZE_REACHED: 'never: a simulated group has far fewer members than group.max.size',
      FENCED_INSTANCE_ID: NO_STATIC_MEMBERS,
      UNSUPPORTED_VERSION: 'never: JoinGroup v5 is served',
      UNKNOWN_SERVER_ERROR,
    },
  },
  SyncGroup: {
    allowed: { ...COORDINATOR_ERRORS, UNKNOWN_MEMBER_ID: always, ILLEGAL_GENERATION: always, REBALANCE_IN_PROGRESS: always },
    excluded: { FENCED_INSTANCE_ID: NO_STATIC_MEMBERS, INCONSISTENT_GROUP_PROTOCOL: 'never: SyncGroup v5+ only', UNKNOWN_SERVER_ERROR },
  },
  Heartbeat: {
    allowed: { ...COORDINATOR_ERRORS, UNKNOWN_MEMBER_ID: always, ILLEGAL_GENERATION: always, REBALANCE_IN_PROGRESS: always },
    excluded: { FENCED_INSTANCE_ID: NO_STATIC_MEMBERS, UNKNOWN_SERVER_ERROR },
  },
  LeaveGroup: {
    allowed: { ...COORDINATOR_ERRORS, UNKNOWN_MEMBER_ID: always },
    excluded: { FENCED_INSTANCE_ID: NO_STATIC_MEMBERS, UNKNOWN_SERVER_ERROR },
  },
  InitProducerId: {
    allowed: { COORDINATOR_LOAD_IN_PROGRESS: always, COORDINATOR_NOT_AVAILABLE: always, NOT_COORDINATOR: always, CLUSTER_AUTHORIZATION_FAILED: secured },
    excluded: {
      TRANSACTIONAL_ID_AUTHORIZATION_FAILED: NO_TRANSACTIONS,
      INVALID_PRODUCER_EPOCH: NO_TRANSACTIONS,
      PRODUCER_FENCED: NO_TRANSACTIONS,
      UNKNOWN_SERVER_ERROR,
    },
  },
  CreateTopics: {
    allowed: {
      REQUEST_TIMED_OUT: always,
      TOPIC_ALREADY_EXISTS: always,
      INVALID_REPLICATION_FACTOR: always,
      NOT_CONTROLLER: always,
      TOPIC_AUTHORIZATION_FAILED: secured,
    },
    excluded: {
      INVALID_TOPIC_EXCEPTION: 'never: the simulated topics have valid names',
      INVALID_PARTITIONS: 'never: the admin asks for 1 to 8 partitions',
      INVALID_REPLICA_ASSIGNMENT: 'never: the admin names no assignment',
      INVALID_CONFIG: 'never: the admin creates topics without configs',
      INVALID_REQUEST: WELL_FORMED,
      POLICY_VIOLATION: 'never: no create-topic policy is set',
      UNKNOWN_SERVER_ERROR,
    },
  },
  DeleteTopics: {
    allowed: { REQUEST_TIMED_OUT: always, UNKNOWN_TOPIC_OR_PARTITION: always, NOT_CONTROLLER: always, TOPIC_AUTHORIZATION_FAILED: secured },
    excluded: {
      INVALID_TOPIC_EXCEPTION: 'never: the simulated topics have valid names',
      TOPIC_DELETION_DISABLED: 'never: delete.topic.enable is on',
      INVALID_REQUEST: WELL_FORMED,
      UNKNOWN_SERVER_ERROR,
    },
  },
  DeleteRecords: {
    allowed: {
      OFFSET_OUT_OF_RANGE: always,
      UNKNOWN_TOPIC_OR_PARTITION: always,
      NOT_LEADER_OR_FOLLOWER: always,
      REQUEST_TIMED_OUT: always,
      KAFKA_STORAGE_ERROR: always,
      TOPIC_AUTHORIZATION_FAILED: secured,
    },
    excluded: { POLICY_VIOLATION: 'never: no policy is set', UNKNOWN_SERVER_ERROR },
  },
  CreatePartitions: {
    allowed: {
      INVALID_PARTITIONS: always, // a count not above the current one: an earlier CreatePartitions of unknown outcome took effect
      UNKNOWN_TOPIC_OR_PARTITION: always,
      INVALID_REPLICATION_FACTOR: always,
      REQUEST_TIMED_OUT: always,
      NOT_CONTROLLER: always,
      TOPIC_AUTHORIZATION_FAILED: secured,
    },
    excluded: {
      INVALID_REPLICA_ASSIGNMENT: 'never: the admin names no assignment',
      INVALID_REQUEST: WELL_FORMED,
      POLICY_VIOLATION: 'never: no policy is set',
      UNKNOWN_SERVER_ERROR,
    },
  },
  IncrementalAlterConfigs: {
    allowed: {
      UNKNOWN_TOPIC_OR_PARTITION: always,
      REQUEST_TIMED_OUT: always,
      NOT_CONTROLLER: always,
      TOPIC_AUTHORIZATION_FAILED: secured,
      CLUSTER_AUTHORIZATION_FAILED: secured,
    },
    excluded: {
      INVALID_CONFIG: 'never: the admin sets valid values of known topic configs',
      INVALID_REQUEST: WELL_FORMED,
      POLICY_VIOLATION: 'never: no alter-config policy is set',
      UNKNOWN_SERVER_ERROR,
    },
  },
  CreateAcls: {
    allowed: { REQUEST_TIMED_OUT: always, NOT_CONTROLLER: always },
    excluded: {
      SECURITY_DISABLED: 'never: the admin creates ACLs only in secured runs',
      CLUSTER_AUTHORIZATION_FAILED: 'never: the admin is a super user',
      INVALID_REQUEST: WELL_FORMED,
      UNKNOWN_SERVER_ERROR,
    },
  },
  DeleteAcls: {
    allowed: { REQUEST_TIMED_OUT: always, NOT_CONTROLLER: always },
    excluded: {
      SECURITY_DISABLED: 'never: the admin deletes ACLs only in secured runs',
      CLUSTER_AUTHORIZATION_FAILED: 'never: the admin is a super user',
      INVALID_REQUEST: WELL_FORMED,
      UNKNOWN_SERVER_ERROR,
    },
  },
};

const API_OF_KIND: Readonly<Record<Exclude<JudgedOp['kind'], 'request'>, string>> = {
  produce: 'Produce',
  fetch: 'Fetch',
  'list-offsets': 'ListOffsets',
  metadata: 'Metadata',
  commit: 'OffsetCommit',
  'join-group': 'JoinGroup',
  'sync-group': 'SyncGroup',
  heartbeat: 'Heartbeat',
  'leave-group': 'LeaveGroup',
  'offset-fetch': 'OffsetFetch',
  'create-topic': 'CreateTopics',
  'delete-topic': 'DeleteTopics',
  'delete-records': 'DeleteRecords',
  'create-partitions': 'CreatePartitions',
  'alter-configs': 'IncrementalAlterConfigs',
  'create-acl': 'CreateAcls',
  'delete-acl': 'DeleteAcls',
};

/** Kafka's name of the API an op's request was. */
export function apiOf(op: JudgedOp): string {
  return op.kind === 'request' ? op.api : API_OF_KIND[op.kind];
}

export function runFacts(history: History): RunFacts {
  const skews = history.faults.filter((fault) => fault.fault === 'clock-skew').map((fault) => fault.atMs);
  return { secured: history.security !== undefined, minInsyncReplicas: mostMinInsyncReplicas(history), clockSkewFromMs: Math.min(Infinity, ...skews) };
}

function mostMinInsyncReplicas(history: History): number {
  let most = history.shape.minInsyncReplicas;
  for (const op of history.ops) {
    if (op.kind !== 'alter-configs') continue;
    for (const config of op.configs) if (config.name === MIN_INSYNC_REPLICAS && config.value !== null) most = Math.max(most, Number(config.value));
  }
  return most;
}

/**
 * Why `error` may not answer `op` (an answered error: a Kafka error name, or what the client made
 * of an answer it could not read); null when it may.
 */
export function refusedAnswer(op: JudgedOp, error: string, run: RunFacts): string | null {
  const api = apiOf(op);
  const answers = API_ANSWERS[api];
  if (answers === undefined) return `${api} has no answer model`;
  const when = answers.allowed[error];
  if (when !== undefined) return when(op, run) ? null : `${error} answers ${api} only ${conditionOf(when)}`;
  return answers.excluded[error] ?? `${error} is not an error Kafka answers ${api} with`;
}

function conditionOf(when: When): string {
  if (when === secured) return 'in a secured run (an authorizer)';
  if (when === idempotent) return "to an idempotent producer's batch";
  if (when === acksAllQuorum) return 'to acks=all with min.insync.replicas above 1';
  if (when === clockSkewed) return "after a clock-skew fault (a broker's clock set back)";
  return 'never here';
}
