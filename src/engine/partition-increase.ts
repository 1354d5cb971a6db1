import { FerryError } from '../errors.ts';
import { PARTITIONS_PER_TOPIC_MAX } from './topic-registry.ts';

/**
 * Kafka's CreatePartitions checks of a topic's new partition count, with the messages its
 * controller gives (ReplicationControlManager): a topic only grows, and never past
 * PARTITIONS_PER_TOPIC_MAX. Throws InvalidPartitions (Kafka's INVALID_PARTITIONS).
 */
export function checkPartitionIncrease(topic: string, currentCount: number, newTotalCount: number): void {
  if (newTotalCount === currentCount) throw new FerryError('InvalidPartitions', `Topic already has ${currentCount} partition(s).`);
  if (!Number.isSafeInteger(newTotalCount) || newTotalCount < currentCount)
    throw new FerryError('InvalidPartitions', `The topic ${topic} currently has ${currentCount} partition(s); ${newTotalCount} would not be an increase.`);
  if (newTotalCount > PARTITIONS_PER_TOPIC_MAX)
    throw new FerryError('InvalidPartitions', `The topic ${topic} would have ${newTotalCount} partition(s), more than the ${PARTITIONS_PER_TOPIC_MAX} a topic may have.`);
}
