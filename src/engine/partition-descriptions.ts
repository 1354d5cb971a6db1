import { FerryError } from '../errors.ts';
import type { Disk } from '../util/disk.ts';
import type { DescribedProducer, LogDirDescription, LogDirPartition } from './engine-options.ts';
import type { Partition } from '../partition/partition.ts';
import type { PartitionTable } from './partition-table.ts';

/** DescribeProducers' fields of transactions, which Ferry does not have (Kafka's -1: none). */
const NO_COORDINATOR_EPOCH = -1;
const NO_TRANSACTION_START_OFFSET = -1;

/**
 * Kafka's DescribeProducers of a partition led here: its idempotent producers from the log's
 * producer state. Ferry has no transactions: coordinatorEpoch and currentTxnStartOffset are -1.
 * NotLeader on a follower.
 */
export function describeProducers(target: Partition): DescribedProducer[] {
  const name = `${target.topic}-${target.index}`;
  if (target.role.kind !== 'leader') throw new FerryError('NotLeader', `Leader not local for partition ${name}: it is a follower here`);
  return target.log.activeProducers().map((producer) => ({ ...producer, coordinatorEpoch: NO_COORDINATOR_EPOCH, currentTxnStartOffset: NO_TRANSACTION_START_OFFSET }));
}

/**
 * Kafka's DescribeLogDirs of an engine's one log directory: every partition served there (led or
 * followed) with its bytes on local disk and its offset lag (a leader's is 0, a follower's how far
 * its log end is behind its leader's high watermark), and the directory's total and usable bytes
 * as the disk reports them (null when it cannot say).
 */
export function describeLogDir(table: PartitionTable, directory: string, disk: Disk): LogDirDescription {
  const partitions: LogDirPartition[] = [];
  for (const [topic, served] of table) {
    served.forEach((partition, index) => {
      const lag = partition.role.kind === 'leader' ? 0 : Math.max(0, (partition.leaderHighWatermark ?? 0) - partition.log.logEndOffset);
      partitions.push({ topic, partition: index, sizeBytes: partition.log.sizeBytes, offsetLag: lag, isFutureKey: false });
    });
  }
  const space = disk.statfsSync?.(directory) ?? null;
  return { path: directory, totalBytes: space?.totalBytes ?? null, usableBytes: space?.usableBytes ?? null, partitions };
}
