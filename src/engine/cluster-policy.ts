import type { IncarnationState } from '../wal-gc/coverage.ts';
import type { WriterLiveness } from '../wal-gc/orphan-writers.ts';
import type { TopicId } from '../format/topic-id.ts';

/**
 * What a cluster decides for an engine it manages (EngineOptions.cluster), given at open and
 * never changed: the partitions come and go by adoptPartition and releasePartition, and these
 * answer what only the cluster's records know (docs/cluster-protocol.md). An engine alone has
 * none: it opens its registry's topics, always leads them, counts its attached replicas as
 * followers, and judges incarnations by its own deletion records (DI1).
 */
export interface ClusterPolicy {
  /**
   * [C1], L5, L8: throws NotLeader while this broker may not act as leader (acknowledge, serve
   * reads as leader) on a partition of incarnation `topicId` of `topic`: its lease may have
   * lapsed, or it has not seen the topic in the control store within its lease.
   */
  checkLeadership(topic: string, topicId: TopicId): void;
  /** I1: the partition's replica set without its leader, as replica ids, only brokers that hold a live lease. */
  followersOf(topic: string, partition: number): ReadonlySet<string>;
  /** GI1, DI1: what the cluster's records say of a topic incarnation, for WAL GC. */
  incarnationState(topic: string, topicId: TopicId): Promise<IncarnationState>;
  /** [G1] Which writer ids no live broker writes as, that the hash gives this broker to collect. */
  readonly writerLiveness: WriterLiveness;
  /** [K4] Whether this broker is adopting partitions now: the tierer's rounds wait for the adoptions (TiererOptions.holdWhile). */
  adopting(): boolean;
}
