import { join } from 'node:path';
import type { MetricsRegistry } from '../metrics/index.ts';
import { DEFAULT_FOLLOWER_CONFIG, Follower, type FollowerConfig, type FollowerTarget } from '../partition/follower.ts';
import { FollowerMetrics } from '../partition/metrics.ts';
import type { ObjectStore } from '../store/object-store.ts';
import type { Clock } from '../util/clock.ts';
import type { Disk } from '../util/disk.ts';
import type { TierStart } from '../tier/tier-start.ts';
import { SeededRandom } from '../util/random.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader, type WalReaderConfig } from '../wal/reader.ts';
import type { Partition } from '../partition/partition.ts';
import type { TopicId } from '../format/topic-id.ts';

/** Where a follower engine keeps its position in the leader's WAL streams. */
const FOLLOWER_CHECKPOINT_FILE = 'wal-follower-checkpoint';

/** How a read replica follows its leader (`Ferry.open({ follow })`): through the object store they share, never through the leader. */
export interface FollowOptions {
  /** The store the leader writes its WAL objects to. */
  readonly store: ObjectStore;
  /** The leader's writer id (its `wal.writerId`). */
  readonly writerId: string;
  /** The key prefix the leader writes under (its `wal.prefix`); none by default. */
  readonly prefix?: string;
  /** Which partitions to replicate; all by default. */
  readonly partitions?: (topic: string, partition: number) => boolean;
  /** How WAL objects are read (fetch sizes, retries); the defaults suit S3 Express. */
  readonly reader?: Partial<Omit<WalReaderConfig, 'prefix' | 'wants'>>;
  /** How the replica polls and checkpoints (poll interval and its backoff, fetch-ahead, checkpoint interval). */
  readonly follower?: Partial<Omit<FollowerConfig, 'writerId'>>;
  /** Seeds the retry jitter of the replica's reads; 1 by default. */
  readonly seed?: number;
}

/** The engine's followed partitions, as its Follower fills them. */
export interface FollowedPartitions {
  /** The partition of incarnation `topicId`, created when the WAL first names it; null for a deleted incarnation. */
  partitionFor(topic: string, index: number, topicId: TopicId): Promise<Partition | null>;
  /** The partition `partitionFor` gave last for `topic`-`index`. */
  served(topic: string, index: number): Partition;
  /** The follower applied below `logEndOffset`: tell a linked leader, if any (acks=all counts it). */
  reportApplied(topic: string, topicId: TopicId, index: number, logEndOffset: number): void;
  /** Where the tier ends for the partition, with its producer state and epochs there; null without a tier or with nothing tiered. */
  tierStartOf(topicId: TopicId, index: number): Promise<TierStart | null>;
}

export interface EmbeddedFollowerDeps {
  readonly clock: Clock;
  /** The engine's directory: the follower's checkpoint lives there. */
  readonly directory: string;
  readonly disk: Disk;
  readonly metrics?: MetricsRegistry | undefined;
}

/** An engine opened with `follow`: a started Follower applying the leader's WAL streams to `partitions`. */
export function startEmbeddedFollower(options: FollowOptions, partitions: FollowedPartitions, deps: EmbeddedFollowerDeps): Follower {
  const prefix = options.prefix ?? '';
  const random = new SeededRandom(options.seed ?? 1);
  const wants = options.partitions ?? (() => true);
  const reader = new WalReader(options.store, { ...DEFAULT_WAL_READER_CONFIG, ...options.reader, prefix, wants, wantsEveryFrame: options.partitions === undefined }, { clock: deps.clock, random });
  const config = { ...DEFAULT_FOLLOWER_CONFIG, ...options.follower, writerId: options.writerId };
  const observer = deps.metrics === undefined ? undefined : new FollowerMetrics(deps.metrics, deps.clock);
  const checkpointPath = join(deps.directory, FOLLOWER_CHECKPOINT_FILE);
  const follower = new Follower(options.store, reader, followerTarget(partitions), config, { clock: deps.clock, checkpointPath, disk: deps.disk, ...(observer === undefined ? {} : { observer }) });
  follower.start();
  return follower;
}

function followerTarget(partitions: FollowedPartitions): FollowerTarget {
  return {
    log: async (topic: string, index: number, topicId: TopicId) => (await partitions.partitionFor(topic, index, topicId))?.log ?? null,
    applied: (topic: string, index: number, logEndOffset: number) => {
      const partition = partitions.served(topic, index); // the incarnation `log` just gave
      partition.noteApplied();
      partitions.reportApplied(topic, partition.topicId, index, logEndOffset);
    },
    // [D4] The frames below `fromOffset` were collected once tiered: the log goes on from the tier's end.
    startAtTier: async (log, topicId, index, fromOffset) => {
      const start = await partitions.tierStartOf(topicId, index);
      if (start === null || start.offset < fromOffset || start.offset <= log.logEndOffset) return false;
      log.startAt(start.offset, start.epochs, start.producers);
      return true;
    },
  };
}
