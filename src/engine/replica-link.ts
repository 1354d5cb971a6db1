import type { TopicId } from '../format/topic-id.ts';
import type { StreamId } from '../wal/keys.ts';

/**
 * The in-process link between a leader engine and its replicas (Ferry.attachReplica; brokers use
 * the network instead). Each side sees the other only through these interfaces.
 *
 * Data flows in a loop here, not one way (issue 9 names it): a durable WAL object makes the leader
 * hint its replicas, a replica applies it and reports to the leader, which pushes its high
 * watermark back to the replicas. The loop is the protocol itself; each step is one call below.
 */

/** What a leader engine shows the replicas linked to it. */
export interface LinkedLeader {
  readonly closed: boolean;
  /** The high watermark of `topic`-`index` when the leader serves it as incarnation `topicId`. */
  highWatermarkOf(topic: string, topicId: TopicId, index: number): number | undefined;
  /** Replica `replicaId` applied everything below `logEndOffset` of incarnation `topicId`. */
  replicaApplied(replicaId: string, topic: string, topicId: TopicId, index: number, logEndOffset: number): void;
}

/** A leader's durable end: every object of `stream` up to `sequence` is durable ([W5]: durability moves over contiguous sequences). */
export interface DurableEnd {
  readonly stream: StreamId;
  readonly sequence: number;
}

/** What a replica engine (opened with `follow`) shows its leader. */
export interface LinkedReplica {
  readonly closed: boolean;
  /** Whether the engine follows a WAL at all (only such an engine can be a replica). */
  readonly follows: boolean;
  /** From now on the replica reports what it applies to `leader`, as `replicaId`. */
  linkTo(leader: LinkedLeader, replicaId: string): void;
  /** A WAL object became durable: look for it now rather than at the next poll. `through`: the leader's durable end, when it has a WAL. */
  hint(through?: DurableEnd): void;
  /** The leader committed below `highWatermark` of incarnation `topicId`. */
  noteLeaderHighWatermark(topic: string, topicId: TopicId, index: number, highWatermark: number): void;
  /** Each partition the replica holds, with its log end. */
  logEnds(): Iterable<PartitionEnd>;
}

export interface PartitionEnd {
  readonly topic: string;
  readonly topicId: TopicId;
  readonly index: number;
  readonly offset: number;
}

/** The leader's partitions as its replica links need them. */
export interface LeaderPartitions {
  readonly closed: boolean;
  /** Each served partition's high watermark. */
  highWatermarks(): Iterable<PartitionEnd>;
  highWatermarkOf(topic: string, topicId: TopicId, index: number): number | undefined;
  /** Counts a replica's progress on the partition when it is of incarnation `topicId`. */
  noteFollowerApplied(topic: string, topicId: TopicId, index: number, replicaId: string, logEndOffset: number): void;
}

/** A replica's end of the link: whom it reports to. */
export interface LeaderLink {
  readonly leader: LinkedLeader;
  readonly replicaId: string;
}

/** The leader's end: its linked replicas, hinted on durable objects and told the high watermark. */
export class ReplicaLinks {
  readonly #partitions: LeaderPartitions;
  readonly #replicas: LinkedReplica[] = [];
  readonly #replicaIds = new Set<string>();
  #notifyQueued = false;
  /** The durable end the last notice named: the replicas' hints carry it. */
  #through: DurableEnd | null = null;

  constructor(partitions: LeaderPartitions) {
    this.#partitions = partitions;
  }

  /** The ids of the linked replicas: the followers of every partition when no cluster says otherwise. */
  get replicaIds(): ReadonlySet<string> {
    return this.#replicaIds;
  }

  /** Links `replica`: what it holds already counts as applied, and it learns the high watermarks. */
  attach(replica: LinkedReplica, replicaId: string): void {
    replica.linkTo(this.#asLeader(), replicaId);
    this.#replicas.push(replica);
    this.#replicaIds.add(replicaId);
    for (const end of replica.logEnds()) this.#partitions.noteFollowerApplied(end.topic, end.topicId, end.index, replicaId, end.offset);
    this.#pushHighWatermarks();
  }

  /**
   * A durable object may interest the replicas at once. Called per partition of each durable
   * object, so the work is coalesced to once per turn.
   */
  notifyDurable(through?: DurableEnd): void {
    if (this.#replicas.length === 0) return;
    if (through !== undefined) this.#through = through;
    if (this.#notifyQueued) return;
    this.#notifyQueued = true;
    queueMicrotask(() => {
      this.#notifyQueued = false;
      const end = this.#through ?? undefined;
      for (const replica of this.#replicas) if (!replica.closed) replica.hint(end);
      this.#pushHighWatermarks();
    });
  }

  #replicaApplied(replicaId: string, topic: string, topicId: TopicId, index: number, logEndOffset: number): void {
    this.#partitions.noteFollowerApplied(topic, topicId, index, replicaId, logEndOffset);
    this.#pushHighWatermarks();
  }

  #pushHighWatermarks(): void {
    for (const replica of this.#replicas) {
      if (replica.closed) continue;
      for (const end of this.#partitions.highWatermarks()) replica.noteLeaderHighWatermark(end.topic, end.topicId, end.index, end.offset);
    }
  }

  #asLeader(): LinkedLeader {
    const partitions = this.#partitions;
    return {
      get closed() {
        return partitions.closed;
      },
      highWatermarkOf: (topic, topicId, index) => partitions.highWatermarkOf(topic, topicId, index),
      replicaApplied: (replicaId, topic, topicId, index, logEndOffset) => this.#replicaApplied(replicaId, topic, topicId, index, logEndOffset),
    };
  }
}
