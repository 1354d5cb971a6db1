import type { ListOffsetsRequest, ListOffsetsResponse } from '../apis/list-offsets.ts';
import type { BrokerContext } from '../context.ts';
import { ErrorCode } from '../protocol/error-codes.ts';
import { errorCodeOf, notServedCode } from './errors.ts';

/** Earliest (-2), latest (-1, the high watermark) or the first offset at or after a timestamp; current_leader_epoch fenced (KIP-320). */
export function handleListOffsets(context: BrokerContext, request: ListOffsetsRequest): ListOffsetsResponse {
  return {
    throttleTimeMs: 0,
    topics: request.topics.map((topic) => ({
      name: topic.name,
      partitions: topic.partitions.map((partition) => {
        const notServed = notServedCode(context, topic.name, partition.partitionIndex);
        if (notServed !== null) return { partitionIndex: partition.partitionIndex, errorCode: notServed, oldStyleOffsets: [], timestamp: -1, offset: -1, leaderEpoch: -1 };
        try {
          context.engine.checkLeaderEpoch(topic.name, partition.partitionIndex, partition.currentLeaderEpoch); // KIP-320
          const { offset, timestamp, leaderEpoch } = context.engine.offsetFor(topic.name, partition.partitionIndex, partition.timestamp);
          return { partitionIndex: partition.partitionIndex, errorCode: ErrorCode.NONE, oldStyleOffsets: offset < 0 ? [] : [offset], timestamp, offset, leaderEpoch };
        } catch (error) {
          return { partitionIndex: partition.partitionIndex, errorCode: errorCodeOf(error), oldStyleOffsets: [], timestamp: -1, offset: -1, leaderEpoch: -1 };
        }
      }),
    })),
  };
}
