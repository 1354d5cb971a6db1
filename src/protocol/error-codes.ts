import type { FerryErrorKind } from '../errors.ts';

/** Kafka's error codes that Ferry answers with (clients/src/main/java/.../protocol/Errors.java). */
export const ErrorCode = {
  NONE: 0,
  UNKNOWN_SERVER_ERROR: -1,
  OFFSET_OUT_OF_RANGE: 1,
  CORRUPT_MESSAGE: 2,
  UNKNOWN_TOPIC_OR_PARTITION: 3,
  INVALID_FETCH_SIZE: 4,
  LEADER_NOT_AVAILABLE: 5,
  NOT_LEADER_OR_FOLLOWER: 6,
  REQUEST_TIMED_OUT: 7,
  MESSAGE_TOO_LARGE: 10,
  COORDINATOR_LOAD_IN_PROGRESS: 14,
  COORDINATOR_NOT_AVAILABLE: 15,
  NOT_COORDINATOR: 16,
  INVALID_TOPIC_EXCEPTION: 17,
  RECORD_LIST_TOO_LARGE: 18,
  NOT_ENOUGH_REPLICAS: 19,
  NOT_ENOUGH_REPLICAS_AFTER_APPEND: 20,
  INVALID_REQUIRED_ACKS: 21,
  ILLEGAL_GENERATION: 22,
  INCONSISTENT_GROUP_PROTOCOL: 23,
  INVALID_GROUP_ID: 24,
  UNKNOWN_MEMBER_ID: 25,
  INVALID_SESSION_TIMEOUT: 26,
  REBALANCE_IN_PROGRESS: 27,
  INVALID_COMMIT_OFFSET_SIZE: 28,
  UNSUPPORTED_VERSION: 35,
  TOPIC_ALREADY_EXISTS: 36,
  INVALID_PARTITIONS: 37,
  INVALID_REPLICATION_FACTOR: 38,
  INVALID_REPLICA_ASSIGNMENT: 39,
  INVALID_REQUEST: 42,
  OUT_OF_ORDER_SEQUENCE_NUMBER: 45,
  DUPLICATE_SEQUENCE_NUMBER: 46,
  INVALID_PRODUCER_EPOCH: 47,
  INVALID_TIMESTAMP: 32,
  KAFKA_STORAGE_ERROR: 56,
  UNKNOWN_PRODUCER_ID: 59,
  FENCED_LEADER_EPOCH: 74,
  UNKNOWN_LEADER_EPOCH: 76,
  TOPIC_AUTHORIZATION_FAILED: 29,
  GROUP_AUTHORIZATION_FAILED: 30,
  CLUSTER_AUTHORIZATION_FAILED: 31,
  UNSUPPORTED_SASL_MECHANISM: 33,
  ILLEGAL_SASL_STATE: 34,
  SASL_AUTHENTICATION_FAILED: 58,
  THROTTLING_QUOTA_EXCEEDED: 89,
  RESOURCE_NOT_FOUND: 91,
  DUPLICATE_RESOURCE: 92,
  UNACCEPTABLE_CREDENTIAL: 93,
  INVALID_CONFIG: 40,
  NOT_CONTROLLER: 41,
  POLICY_VIOLATION: 44,
  TRANSACTIONAL_ID_AUTHORIZATION_FAILED: 53,
  SECURITY_DISABLED: 54,
  LOG_DIR_NOT_FOUND: 57,
  NON_EMPTY_GROUP: 68,
  GROUP_ID_NOT_FOUND: 69,
  LISTENER_NOT_FOUND: 72,
  MEMBER_ID_REQUIRED: 79,
  GROUP_MAX_SIZE_REACHED: 81,
  GROUP_SUBSCRIBED_TO_TOPIC: 86,
  INVALID_RECORD: 87,
  UNKNOWN_TOPIC_ID: 100,
  INCONSISTENT_TOPIC_ID: 103,
  UNSUPPORTED_ENDPOINT_TYPE: 115,
} as const;

export type ErrorCode = (typeof ErrorCode)[keyof typeof ErrorCode];

/** The one place Ferry's error kinds become Kafka error codes (STYLE.md 4). */
export function errorCodeFor(kind: FerryErrorKind): ErrorCode {
  switch (kind) {
    case 'UnknownTopicOrPartition':
      return ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
    case 'OffsetOutOfRange':
      return ErrorCode.OFFSET_OUT_OF_RANGE;
    case 'CorruptRecord':
      return ErrorCode.CORRUPT_MESSAGE;
    case 'RecordTooLarge':
      return ErrorCode.MESSAGE_TOO_LARGE;
    case 'TopicAlreadyExists':
      return ErrorCode.TOPIC_ALREADY_EXISTS;
    case 'InvalidConfig':
      return ErrorCode.INVALID_CONFIG;
    case 'InvalidPartitions':
      return ErrorCode.INVALID_PARTITIONS;
    case 'InvalidArgument':
    case 'InvalidOffsets':
      return ErrorCode.INVALID_REQUEST;
    case 'Fenced':
    case 'NotLeader':
      return ErrorCode.NOT_LEADER_OR_FOLLOWER;
    case 'FencedLeaderEpoch':
      return ErrorCode.FENCED_LEADER_EPOCH;
    case 'UnknownLeaderEpoch':
      return ErrorCode.UNKNOWN_LEADER_EPOCH;
    case 'Storage':
    case 'CorruptObject':
      return ErrorCode.KAFKA_STORAGE_ERROR;
    case 'OutcomeUnknown':
      return ErrorCode.REQUEST_TIMED_OUT; // Kafka's answer when the controller did not finish in time: the change may still happen
    case 'NotCoordinator':
      return ErrorCode.NOT_COORDINATOR;
    case 'StaleMember':
      return ErrorCode.ILLEGAL_GENERATION;
    case 'OutOfOrderSequence':
      return ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER;
    case 'InvalidProducerEpoch':
      return ErrorCode.INVALID_PRODUCER_EPOCH;
    case 'InvalidTimestamp':
      return ErrorCode.INVALID_TIMESTAMP;
    case 'Closed':
    case 'Locked':
      return ErrorCode.LEADER_NOT_AVAILABLE;
  }
}
