import type { ConfigAlteration } from '../log/topic-config-changes.ts';
import type { TopicConfigs } from '../log/topic-config.ts';
import type { ProducerRecord } from '../format/index.ts';
import {
  type ConsumedRecord,
  type ConsumeOptions,
  type CreateTopicOptions,
  Engine,
  type EngineOptions,
  type FetchOptions,
  type FetchResult,
  type OffsetLookup,
  type ProducedRecord,
  type ProduceOptions,
  type TopicDescription,
} from '../engine/index.ts';

/**
 * How an embedding service opens Ferry: only `directory` is required; `wal` ships every append to
 * object storage (KIP-1176), `follow` makes a read replica of a leader's WAL, `tier` copies rolled
 * segments to the long-term tier. What only a broker or a cluster sets (partitions assigned by a
 * cluster, the simulation's open hook) is not here.
 */
export type FerryOptions = Omit<EngineOptions, 'cluster' | 'onOpen'>;

/**
 * The embeddable library: topics of partitions, each a durable Kafka-format log on local disk.
 *
 *     const ferry = await Ferry.open({ directory: './data' });
 *     ferry.ensureTopic('orders', { partitions: 3 });
 *     const [produced] = await ferry.produce('orders', [{ key: 'k', value: 'v' }]);
 *     for await (const record of ferry.consume('orders', { partition: produced!.partition })) { ... }
 *     await ferry.close();
 *
 * examples/embedded.ts is the same with a WAL store. This is the face only: the broker and the
 * cluster drive the engine underneath (src/engine/) through its own, wider surface.
 */
export class Ferry {
  readonly #engine: Engine;

  private constructor(engine: Engine) {
    this.#engine = engine;
  }

  /**
   * Opens Ferry in `options.directory`, recovering every partition's log. With a WAL, earlier
   * epochs of this writer's streams are sealed first (docs/wal-protocol.md [F]).
   */
  static async open(options: FerryOptions): Promise<Ferry> {
    return new Ferry(await Engine.open(options));
  }

  /** The directory Ferry keeps its logs in. */
  get directory(): string {
    return this.#engine.directory;
  }

  /** Creates a topic; TopicAlreadyExists if it exists (or is still being deleted), InvalidArgument for a bad name or count. */
  createTopic(name: string, options: CreateTopicOptions = {}): TopicDescription {
    return this.#engine.createTopic(name, options);
  }

  /** Creates the topic unless it exists (a service says at every start what it needs); an existing one is returned unchanged. */
  ensureTopic(name: string, options: CreateTopicOptions = {}): TopicDescription {
    return this.#engine.ensureTopic(name, options);
  }

  /** Every topic, as the registry holds it. */
  topics(): TopicDescription[] {
    return this.#engine.topics();
  }

  /** Grows a topic to `newTotalCount` partitions (never shrinks); `validateOnly` checks without changing anything. */
  createPartitions(name: string, newTotalCount: number, validateOnly = false): TopicDescription {
    return this.#engine.createPartitions(name, newTotalCount, validateOnly);
  }

  /** Deletes a topic: its partitions stop, their directories go, and the name may be created again. */
  deleteTopic(name: string): Promise<void> {
    return this.#engine.deleteTopic(name);
  }

  /** The Kafka configs set on a topic (retention.ms, cleanup.policy, ...). */
  topicConfigs(name: string): TopicConfigs {
    return this.#engine.topicConfigs(name);
  }

  /** Changes a topic's Kafka configs as IncrementalAlterConfigs does: checked whole first, then durable and applied at once. */
  alterTopicConfig(name: string, alteration: ConfigAlteration, validateOnly = false): TopicConfigs {
    return this.#engine.alterTopicConfig(name, alteration, validateOnly);
  }

  /** Appends records and resolves with each one's partition and offset, in input order; with acks 'all' (the default), once durable. */
  produce(topic: string, records: readonly ProducerRecord[], options: ProduceOptions = {}): Promise<ProducedRecord[]> {
    return this.#engine.produce(topic, records, options);
  }

  /** Reads whole batches from `offset` up to the high watermark. */
  fetch(topic: string, partition: number, offset: number, options: FetchOptions = {}): FetchResult {
    return this.#engine.fetch(topic, partition, offset, options);
  }

  /** Yields records from `fromOffset` on (the tier's too), waiting for new ones at the end, until `signal` aborts. */
  consume(topic: string, options: ConsumeOptions = {}): AsyncGenerator<ConsumedRecord> {
    return this.#engine.consume(topic, options);
  }

  /** ListOffsets: the first offset at or after a timestamp, or one of Kafka's special timestamps (-1 latest, -2 earliest). */
  offsetFor(topic: string, partition: number, timestamp: number): OffsetLookup {
    return this.#engine.offsetFor(topic, partition, timestamp);
  }

  /**
   * Links a read replica opened in this process (with `follow`) to this leader: it is hinted as
   * each WAL object becomes durable, and what it applied counts for acks=all.
   */
  attachReplica(replica: Ferry, replicaId: string): void {
    this.#engine.attachReplica(replica.#engine, replicaId);
  }

  /** Flushes and closes every log and releases the directory. Idempotent. */
  close(): Promise<void> {
    return this.#engine.close();
  }
}
