// The control records of the cluster protocol (docs/cluster-protocol.md, "Records"): what brokers
// agree on, each under its key below `<prefix>/control/`, changed by compare-and-swap.
import type { TopicConfigs } from '../log/topic-config.ts';
import type { SettledPrefix } from '../partition/rebuild.ts';
import type { Uuid } from '../util/uuid.ts';
import type { StreamId } from '../wal/keys.ts';
import type { ListenerEndpoint } from './endpoints.ts';

/** `brokers/<nodeId>`: a broker's address, its current stream and its lease ([C1]). */
export interface BrokerRecord {
  readonly nodeId: number;
  /** Its first listener's advertised address. */
  readonly host: string;
  readonly port: number;
  readonly rack: string | null;
  /** Every listener's advertised address, by Kafka listener name; absent: one listener, at host and port. */
  readonly endpoints?: readonly ListenerEndpoint[];
  readonly stream: StreamId;
  readonly renewedAtMs: number;
  readonly leaseMs: number;
  /**
   * Drawn by each process at start: two processes under one node id (a broker restarted while its
   * old process was only paused) tell their writes of this record apart ([C1]).
   */
  readonly incarnation?: string;
  /**
   * [C1] Its local log writes fail (a full disk, an I/O error): it claims nothing, and what it
   * leads is up for grabs, as Kafka takes a failed log directory's partitions offline and elects
   * their leaders elsewhere. Absent while writes succeed.
   */
  readonly storageFailing?: true;
  /**
   * [K1] The port of its peer listener (on `host`): peers hold a connection to it, and a
   * connection its kernel closed, with the listener refusing after, tells them this process
   * exited. Absent: a broker without peer links, judged by its lease alone.
   */
  readonly peerPort?: number;
}

/** `topics/<topic>`: a topic incarnation ([L4]). */
export interface TopicRecord {
  /**
   * Kafka's topic id, drawn when the record is created (docs/design.md contract 10): a topic deleted
   * and created again is another incarnation, and nothing of the old one is served for it.
   */
  readonly topicId: Uuid;
  readonly partitions: number;
  /** Brokers holding each partition: its leader plus this many minus one followers (default 1). */
  readonly replicationFactor?: number;
  /**
   * Set by a delete before it removes the partition records [L4]: the topic is gone for every
   * broker (nothing claimed, served or described), yet its name cannot be created again until the
   * delete removes this record last, so a delete never removes a record of a newer incarnation.
   */
  readonly deleting?: true;
  /**
   * [L4] The leader epoch this incarnation's partitions start at: one past the highest epoch any
   * earlier incarnation of the name reached (its EpochFloorRecord); absent: 0. Leader epochs rise
   * across incarnations, so a follower or client still on a deleted incarnation names an older
   * epoch than any of this one and is fenced (KIP-320), never taken for this incarnation.
   */
  readonly leaderEpochBase?: number;
  /**
   * The Kafka topic configs set on the topic (src/log/topic-config.ts), checked by whoever wrote
   * them; absent (records written before them): none. Changed only by compare-and-swap of the
   * record (alterTopicConfig); every broker takes them on its next scan, and an adoption uses them.
   */
  readonly configs?: TopicConfigs;
}

/**
 * `epoch-floors/<topic>`: the highest leader epoch any deleted incarnation of the name reached.
 * Written by a delete while its topic record is marked `deleting` (no one creates the name
 * meanwhile), read by the next createTopic; it outlives the topic records and only ever rises.
 */
export interface EpochFloorRecord {
  readonly leaderEpoch: number;
}

/** `partitions/<topic>/<partition>`: its leader, leader epoch and chain of WAL streams ([C3]). */
export interface PartitionRecord {
  /** The topic incarnation this record is of; a record naming another id is a deleted one's leftover. */
  readonly topicId: Uuid;
  readonly leader: number;
  readonly leaderEpoch: number;
  /** Every WAL stream that carried the partition, oldest first (docs/cluster-protocol.md). */
  readonly chain: readonly StreamId[];
  /** docs/tier-protocol.md [K6]: a prefix of `chain` a takeover neither seals nor reads again; absent: none known. */
  readonly settled?: SettledPrefix;
  /**
   * Kafka's log start as DeleteRecords moved it (recordLogStart): offsets below are gone for
   * clients on every leader to come, whatever the chain or the tier still holds of them. Only
   * rises; every claim carries it on (planTakeover). Absent: 0.
   */
  readonly logStartOffset?: number;
}

/** A topic record as this node keeps it (the replication factor defaults to 1). */
export function topicOf(record: TopicRecord): TopicRecord {
  return { topicId: record.topicId, partitions: record.partitions, replicationFactor: record.replicationFactor ?? 1, leaderEpochBase: record.leaderEpochBase ?? 0, configs: record.configs ?? {} };
}

/** The key of the name's EpochFloorRecord. */
export function epochFloorKey(topic: string): string {
  return `epoch-floors/${topic}`;
}

/** A partition as the cluster names it, `<topic>/<partition>`: its record is `partitions/<topic>/<partition>`. */
export function partitionKey(topic: string, partition: number): string {
  return `${topic}/${partition}`;
}
