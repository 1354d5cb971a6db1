/**
 * The engine: the partitions one broker (or one embedding service) holds, each a durable
 * Kafka-format log on local disk, with its per-node services (the WAL writer, the tierer, the
 * remote reader, WAL GC, retention). The broker and the cluster drive it; an embedding service
 * uses the `Ferry` face in src/ferry/ instead.
 */
export type {
  Acks,
  AppendedBatches,
  ConsumedRecord,
  ConsumeOptions,
  CreateTopicOptions,
  DescribedProducer,
  EngineOptions,
  EpochEnd,
  FetchOptions,
  FetchResult,
  LogDirDescription,
  LogDirPartition,
  OffsetLookup,
  OpenedEngine,
  ProducedRecord,
  ProduceOptions,
  RetentionDeletion,
  TierOptions,
  TierRange,
} from './engine-options.ts';
export { Engine } from './engine.ts';
export type { FollowOptions } from './embedded-follower.ts';
export type { WalOptions } from './wal-writer-lifecycle.ts';
export type { ClusterPolicy } from './cluster-policy.ts';
export type { TopicDescription } from './topic-registry.ts';
export type { TopicId } from '../format/topic-id.ts';
export { murmur2, partitionForKey } from './partitioner.ts';
export type { ProducerRecord } from '../format/index.ts';
export type { FlushPolicy, LogConfig } from '../log/config.ts';
export { FerryError, type FerryErrorKind, isFerryError } from '../errors.ts';
