/** The embeddable API: open a Ferry on a directory, create topics, produce, fetch, consume. */
export {
  type Acks,
  type ConsumedRecord,
  type ConsumeOptions,
  type CreateTopicOptions,
  type DescribedProducer,
  type FetchOptions,
  type FetchResult,
  Ferry,
  type FerryOptions,
  type LogDirDescription,
  type LogDirPartition,
  type ProducedRecord,
  type ProduceOptions,
  type ReplicaMembership,
  type WalOptions,
} from './ferry.ts';
export type { TopicDescription } from './topic-registry.ts';
export { murmur2, partitionForKey } from './partitioner.ts';
export type { ProducerRecord } from '../format/index.ts';
export type { FlushPolicy, LogConfig } from '../log/config.ts';
export { FerryError, type FerryErrorKind, isFerryError } from '../errors.ts';
