import type { PartitionLog } from '../log/partition-log.ts';

/**
 * [C5] The last step of a rebuild, before the partition is served: its log starts no lower than
 * the log start DeleteRecords left in the partition record (PartitionRecord.logStartOffset), so no
 * record a client deleted comes back from the chain or the tier. A log rebuilt short of it (no
 * record of it survived anywhere) starts over there, as Kafka's follower does when its leader's
 * log start is past its log end. No segment is deleted here: a tiering leader still tiers them,
 * and retention takes them.
 */
export function applyRecordedLogStart(log: PartitionLog, logStartOffset: number | undefined): void {
  if (logStartOffset === undefined || logStartOffset <= log.deletedBeforeOffset) return;
  if (logStartOffset > log.logEndOffset) log.startAt(logStartOffset, log.leaderEpochs, null);
  log.deleteRecordsBefore(logStartOffset, log.logStartOffset);
}
