import { FerryError } from '../errors.ts';
import type { Partition } from '../partition/partition.ts';
import type { PartitionEnd } from './replica-link.ts';
import type { TopicId } from '../format/topic-id.ts';

/**
 * The partitions an engine serves, by topic name: each topic's array is indexed by partition
 * number, with holes where a cluster assigned this engine only some of them (managed mode).
 * Every lookup for a request goes through `partition`, which first checks the engine is open.
 */
export class PartitionTable extends Map<string, Partition[]> {
  readonly #checkOpen: () => void;

  constructor(checkOpen: () => void) {
    super();
    this.#checkOpen = checkOpen;
  }

  /** The partition a request names; Closed once the engine is, UnknownTopicOrPartition when it is not served here. */
  partition(topic: string, index: number): Partition {
    this.#checkOpen();
    const partitions = this.get(topic);
    if (partitions === undefined) throw unknownTopic(topic);
    const partition = partitions[index];
    if (partition === undefined) throw new FerryError('UnknownTopicOrPartition', `partition ${index} does not exist: ${topic} has ${partitions.length}`);
    return partition;
  }

  /** The partition when it is of incarnation `topicId`: progress of another never counts for it. */
  ofIncarnation(topic: string, topicId: TopicId, index: number): Partition | undefined {
    const partition = this.get(topic)?.[index];
    return partition?.topicId === topicId ? partition : undefined;
  }

  /** Every partition served (managed mode's holes skipped). */
  all(): Partition[] {
    return [...this.values()].flat();
  }

  /** Each served partition (managed mode's holes skipped) with an offset of it. */
  ends(offsetOf: (partition: Partition) => number): PartitionEnd[] {
    const ends: PartitionEnd[] = [];
    for (const [topic, partitions] of this) {
      partitions.forEach((partition, index) => ends.push({ topic, topicId: partition.topicId, index, offset: offsetOf(partition) }));
    }
    return ends;
  }
}

export function unknownTopic(topic: string): FerryError {
  return new FerryError('UnknownTopicOrPartition', `unknown topic ${topic}`);
}
