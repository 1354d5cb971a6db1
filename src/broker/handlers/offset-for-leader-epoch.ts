import type { OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse, OffsetForLeaderPartitionResult } from '../apis/offset-for-leader-epoch.ts';
import type { BrokerContext } from '../context.ts';
import type { Session } from '../../security/session.ts';
import { allowedNames, allowedOnCluster, LOCAL_SESSION } from './authorize.ts';
import { AclOperation, ResourceType } from '../../security/acl/model.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { errorCodeOf, notServedCode } from './errors.ts';

/** Kafka's replica id of a "debug" consumer (every version before 3): any replica may answer it. */
const DEBUGGING_REPLICA_ID = -2;

/**
 * Where each asked-for leader epoch ended, from the leader's epoch cache (KIP-101, KIP-320): a
 * consumer whose position lies past the answer was truncated by a leader change and resets. As
 * Kafka does, the current_leader_epoch is fenced first, then only the leader answers (but for a
 * debugging request). Authorized as Kafka's KafkaApis.handleOffsetForLeaderEpochRequest: CLUSTER_ACTION
 * on the cluster (a follower's) allows every topic; else each topic needs DESCRIBE (a consumer's,
 * KIP-320), TOPIC_AUTHORIZATION_FAILED otherwise, whatever the replica id says.
 */
export function handleOffsetForLeaderEpoch(context: BrokerContext, request: OffsetForLeaderEpochRequest, session: Session = LOCAL_SESSION): OffsetForLeaderEpochResponse {
  const names = request.topics.map((topic) => topic.topic);
  const clusterAction = allowedOnCluster(context, session, AclOperation.CLUSTER_ACTION, { logIfDenied: false });
  const authorized = clusterAction ? new Set(names) : allowedNames(context, session, AclOperation.DESCRIBE, ResourceType.TOPIC, names);
  return {
    throttleTimeMs: 0,
    topics: request.topics.map((topic) => ({
      topic: topic.topic,
      partitions: topic.partitions.map(({ partition, currentLeaderEpoch, leaderEpoch }): OffsetForLeaderPartitionResult => {
        const failed = (errorCode: number) => ({ errorCode, partition, leaderEpoch: -1, endOffset: -1 });
        if (!authorized.has(topic.topic)) return failed(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
        const notServed = notServedCode(context, topic.topic, partition);
        if (notServed !== null) return failed(notServed);
        try {
          context.engine.checkLeaderEpoch(topic.topic, partition, currentLeaderEpoch);
          if (request.replicaId !== DEBUGGING_REPLICA_ID && !context.engine.leads(topic.topic, partition)) return failed(ErrorCode.NOT_LEADER_OR_FOLLOWER);
          return { errorCode: ErrorCode.NONE, partition, ...context.engine.endOffsetForLeaderEpoch(topic.topic, partition, leaderEpoch) };
        } catch (error) {
          return failed(errorCodeOf(error));
        }
      }),
    })),
  };
}
