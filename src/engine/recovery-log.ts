import type { PartitionLog } from '../log/partition-log.ts';
import type { Logger } from '../observability/logger.ts';

/**
 * One line for a partition whose log was recovered at open (no clean-shutdown marker): how many
 * segments were scanned, how many bytes of torn or corrupt tail were cut and why the scan
 * stopped, and where the log ends now. A warning when bytes were cut (records not yet in the WAL
 * are gone from this disk; the WAL brings back what was acknowledged), info otherwise. A clean
 * open says nothing: it is every start.
 */
export function logRecovery(logger: Logger, topic: string, partition: number, log: PartitionLog): void {
  const { cleanShutdown, segmentsScanned, truncatedBytes, stopReason } = log.recovery;
  if (cleanShutdown) return;
  const fields = { component: 'log', topic, partition, segmentsScanned, truncatedBytes, stopReason, logEndOffset: log.logEndOffset };
  if (truncatedBytes === 0) {
    logger.info(fields, `${topic}-${partition}: recovered after an unclean shutdown (${segmentsScanned} segments scanned, nothing cut), log end ${log.logEndOffset}`);
    return;
  }
  logger.warn(
    fields,
    `${topic}-${partition}: recovery cut ${truncatedBytes} bytes (${stopReason ?? 'a torn tail'}) after scanning ${segmentsScanned} segments; the log now ends at offset ${log.logEndOffset}`,
  );
}
