/**
 * The embeddable engine (`import { Ferry } from 'ferry'`): open a Ferry on a directory, create
 * topics, produce, fetch, consume; with a WAL store, every append ships to object storage
 * (KIP-1176), and a read replica follows it from there. Bun only.
 *
 * @module ferry
 */
export {
  type Acks,
  type AppendedBatches,
  type ConsumedRecord,
  type ConsumeOptions,
  type CreateTopicOptions,
  type DescribedProducer,
  type EpochEnd,
  type FetchOptions,
  type FetchResult,
  Ferry,
  type FerryOptions,
  type LogDirDescription,
  type LogDirPartition,
  type OffsetLookup,
  type ProducedRecord,
  type ProduceOptions,
  type ReplicaMembership,
  type TierRange,
  type WalOptions,
} from './ferry.ts';
export type { TopicDescription } from './topic-registry.ts';
export { murmur2, partitionForKey } from './partitioner.ts';
export type { ProducerRecord } from '../format/index.ts';
export type { FlushPolicy, LogConfig } from '../log/config.ts';
export { FerryError, type FerryErrorKind, isFerryError } from '../errors.ts';
