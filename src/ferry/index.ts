/**
 * The embeddable library (`import { Ferry } from 'ferry'`): open a Ferry on a directory, create
 * topics, produce, fetch, consume; with a WAL store, every append ships to object storage
 * (KIP-1176), and a read replica follows it from there. Bun only.
 *
 * @module ferry
 */
export { Ferry, type FerryOptions } from './ferry.ts';
export type {
  Acks,
  ConsumedRecord,
  ConsumeOptions,
  CreateTopicOptions,
  FetchOptions,
  FetchResult,
  FollowOptions,
  OffsetLookup,
  ProducedRecord,
  ProduceOptions,
  TierOptions,
  TopicDescription,
  WalOptions,
} from '../engine/index.ts';
export { murmur2, partitionForKey } from '../engine/partitioner.ts';
export type { ConfigAlteration } from '../log/topic-config-changes.ts';
export type { TopicConfigs } from '../log/topic-config.ts';
export type { ProducerRecord } from '../format/index.ts';
export type { FlushPolicy, LogConfig } from '../log/config.ts';
export { FerryError, type FerryErrorKind, isFerryError } from '../errors.ts';
