import type { ListOffsetsRequest, ListOffsetsResponse } from '../apis/list-offsets.ts';
import type { BrokerContext } from '../context.ts';
import type { Session } from '../../security/session.ts';
import { allowedNames, LOCAL_SESSION } from './authorize.ts';
import { AclOperation, ResourceType } from '../../security/acl/model.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { errorCodeOf, notServedCode } from './errors.ts';

/** Kafka's replica id of a debugging tool: answered by any replica (a consumer's, -1, by the leader only). */
const DEBUGGING_REPLICA_ID = -2;

/**
 * Earliest (-2), latest (-1, the high watermark) or the first offset at or after a timestamp;
 * current_leader_epoch fenced (KIP-320). Each topic needs DESCRIBE (else TOPIC_AUTHORIZATION_FAILED
 * for its partitions), as in Kafka's KafkaApis.handleListOffsetRequest, whoever asks.
 */
export async function handleListOffsets(context: BrokerContext, request: ListOffsetsRequest, session: Session = LOCAL_SESSION): Promise<ListOffsetsResponse> {
  const describable = allowedNames(
    context,
    session,
    AclOperation.DESCRIBE,
    ResourceType.TOPIC,
    request.topics.map((topic) => topic.name),
  );
  const topics = [];
  for (const topic of request.topics) {
    const partitions = [];
    for (const partition of topic.partitions) {
      if (!describable.has(topic.name)) {
        partitions.push({ partitionIndex: partition.partitionIndex, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED, oldStyleOffsets: [], timestamp: -1, offset: -1, leaderEpoch: -1 });
        continue;
      }
      // Kafka answers a consumer's ListOffsets from the leader only (fetchOnlyFromLeader): a follower's
      // log start lags the leader's DeleteRecords until it takes it up [R6] (sim seed 30293).
      const notServed =
        notServedCode(context, topic.name, partition.partitionIndex) ??
        (request.replicaId !== DEBUGGING_REPLICA_ID && !context.engine.leads(topic.name, partition.partitionIndex) ? ErrorCode.NOT_LEADER_OR_FOLLOWER : null);
      if (notServed !== null) {
        partitions.push({ partitionIndex: partition.partitionIndex, errorCode: notServed, oldStyleOffsets: [], timestamp: -1, offset: -1, leaderEpoch: -1 });
        continue;
      }
      try {
        context.engine.checkLeaderEpoch(topic.name, partition.partitionIndex, partition.currentLeaderEpoch); // KIP-320
        const { offset, timestamp, leaderEpoch } = await context.engine.offsetForWithTier(topic.name, partition.partitionIndex, partition.timestamp); // the tier's start is the earliest [D3]
        partitions.push({ partitionIndex: partition.partitionIndex, errorCode: ErrorCode.NONE, oldStyleOffsets: offset < 0 ? [] : [offset], timestamp, offset, leaderEpoch });
      } catch (error) {
        partitions.push({ partitionIndex: partition.partitionIndex, errorCode: errorCodeOf(error), oldStyleOffsets: [], timestamp: -1, offset: -1, leaderEpoch: -1 });
      }
    }
    topics.push({ name: topic.name, partitions });
  }
  return { throttleTimeMs: 0, topics };
}
