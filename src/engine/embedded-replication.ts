import { FerryError } from '../errors.ts';
import type { MetricsRegistry } from '../metrics/index.ts';
import type { Follower } from '../partition/follower.ts';
import type { TierStart } from '../tier/tier-start.ts';
import type { Clock } from '../util/clock.ts';
import type { Disk } from '../util/disk.ts';
import { type FollowedPartitions, type FollowOptions, startEmbeddedFollower } from './embedded-follower.ts';
import type { Partition } from '../partition/partition.ts';
import type { PartitionTable } from './partition-table.ts';
import { type LeaderLink, type LeaderPartitions, type LinkedReplica, ReplicaLinks } from './replica-link.ts';
import type { TopicId } from '../format/topic-id.ts';
import type { TopicDescription, TopicRegistry } from './topic-registry.ts';

/** What an engine's embedded replication works with. */
export interface EmbeddedReplicationDeps {
  readonly table: PartitionTable;
  readonly registry: TopicRegistry;
  readonly clock: Clock;
  readonly directory: string;
  readonly disk: Disk;
  readonly metrics: MetricsRegistry | undefined;
  readonly closed: () => boolean;
  /** Opens the partitions of `topic` not open yet (a follower meeting a topic or a new partition). */
  readonly openTopic: (topic: TopicDescription) => void;
  /** Drops a topic's incarnation (a follower meeting the next incarnation of a name). */
  readonly deleteTopic: (topic: string) => Promise<void>;
  readonly tierStartOf: (topicId: TopicId, index: number) => Promise<TierStart | null>;
}

/**
 * Replication between engines of one process (Ferry.attachReplica, an embedding service's read
 * replica): as a leader, the replicas linked to it (hinted as each WAL object becomes durable;
 * what they applied counts for acks=all); as a follower (opened with `follow`), the Follower that
 * applies the leader's WAL streams, its partitions created as the WAL names them, and the leader
 * it reports to. A cluster's brokers replicate over the network instead (src/cluster).
 */
export class EmbeddedReplication {
  readonly #table: PartitionTable;
  readonly #registry: TopicRegistry;
  readonly #clock: Clock;
  readonly #directory: string;
  readonly #disk: Disk;
  readonly #metrics: MetricsRegistry | undefined;
  readonly #closed: () => boolean;
  readonly #openTopic: (topic: TopicDescription) => void;
  readonly #deleteTopic: (topic: string) => Promise<void>;
  readonly #tierStartOf: (topicId: TopicId, index: number) => Promise<TierStart | null>;
  /** Leader side: the replicas linked to this engine in this process. */
  readonly links: ReplicaLinks;
  /** Replica side: this engine as its leader sees it. */
  readonly linked: LinkedReplica;
  /** Replica side: the leader it reports to, once linked. */
  #leaderLink: LeaderLink | null = null;
  #follower: Follower | null = null;

  constructor(deps: EmbeddedReplicationDeps) {
    this.#table = deps.table;
    this.#registry = deps.registry;
    this.#clock = deps.clock;
    this.#directory = deps.directory;
    this.#disk = deps.disk;
    this.#metrics = deps.metrics;
    this.#closed = deps.closed;
    this.#openTopic = deps.openTopic;
    this.#deleteTopic = deps.deleteTopic;
    this.#tierStartOf = deps.tierStartOf;
    this.links = new ReplicaLinks(this.#asLeaderPartitions());
    this.linked = this.#asLinkedReplica();
  }

  /** The follower applying WAL objects, when this engine follows a leader. */
  get follower(): Follower | null {
    return this.#follower;
  }

  /** Links `replica` (another engine's side, opened with `follow`) to this leader. */
  attach(replica: LinkedReplica, replicaId: string): void {
    if (!replica.follows) throw new FerryError('InvalidArgument', 'the replica must be opened with `follow`');
    this.links.attach(replica, replicaId);
  }

  /** Stops following (at close). */
  async stop(): Promise<void> {
    await this.#follower?.stop();
  }

  startFollowing(options: FollowOptions): void {
    const partitions: FollowedPartitions = {
      partitionFor: (topic, index, topicId) => this.#followerPartition(topic, index, topicId),
      served: (topic, index) => this.#table.get(topic)![index]!,
      reportApplied: (topic, topicId, index, logEndOffset) => {
        const link = this.#leaderLink;
        if (link !== null && !link.leader.closed) link.leader.replicaApplied(link.replicaId, topic, topicId, index, logEndOffset);
      },
      tierStartOf: (topicId, index) => this.#tierStartOf(topicId, index),
    };
    this.#follower = startEmbeddedFollower(options, partitions, { clock: this.#clock, directory: this.#directory, disk: this.#disk, metrics: this.#metrics });
  }
  /**
   * A follower's partition of topic incarnation `topicId`, created when the WAL first names it
   * (topic or partition count grows). A new id for a known name means the leader deleted the
   * topic and created it again: the old incarnation is dropped here too. Null for a deleted one.
   */
  async #followerPartition(topic: string, index: number, topicId: TopicId): Promise<Partition | null> {
    const known = this.#registry.get(topic);
    if (known !== undefined && known.id !== topicId) {
      if (this.#registry.isRetired(topicId)) return null;
      await this.#deleteTopic(topic);
    }
    const existing = this.#table.get(topic)?.[index];
    if (existing !== undefined) return existing;
    const description = this.#registry.get(topic) === undefined ? this.#registry.add({ name: topic, partitions: index + 1, config: {} }, topicId) : this.#registry.grow(topic, index + 1);
    this.#openTopic(description);
    const created = this.#table.get(topic)![index]!;
    // Linked to a leader: serve nothing until it says what is committed.
    if (this.#leaderLink !== null) created.noteLeaderHighWatermark(this.#leaderLink.leader.highWatermarkOf(topic, topicId, index) ?? 0);
    return created;
  }
  /** This engine's partitions as the replicas linked to it see them (leader side of attachReplica). */
  #asLeaderPartitions(): LeaderPartitions {
    const replication = this;
    return {
      get closed() {
        return replication.#closed();
      },
      highWatermarks: () => this.#table.ends((partition) => partition.highWatermark),
      highWatermarkOf: (topic, topicId, index) => this.#table.ofIncarnation(topic, topicId, index)?.highWatermark,
      noteFollowerApplied: (topic, topicId, index, replicaId, logEndOffset) => void this.#table.ofIncarnation(topic, topicId, index)?.noteFollowerApplied(replicaId, logEndOffset),
    };
  }
  /** This engine as the leader it is linked to sees it (replica side of attachReplica). */
  #asLinkedReplica(): LinkedReplica {
    const replication = this;
    return {
      get closed() {
        return replication.#closed();
      },
      get follows() {
        return replication.#follower !== null;
      },
      linkTo: (leader, replicaId) => void (this.#leaderLink = { leader, replicaId }),
      hint: (through) => this.#follower?.hint(through),
      noteLeaderHighWatermark: (topic, topicId, index, highWatermark) => this.#table.ofIncarnation(topic, topicId, index)?.noteLeaderHighWatermark(highWatermark),
      logEnds: () => this.#table.ends((partition) => partition.log.logEndOffset),
    };
  }
}
