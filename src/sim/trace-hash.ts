import type { History } from './history.ts';

/**
 * A fingerprint of a run's whole course: every client request with its times and answers, every
 * fault, the final logs byte for byte, the tier and its records' writes (runs that tier), and the number of events the scheduler ran. Two runs of
 * one seed on one code base must give the same hash (the replay test); any difference in what
 * happened, or when, changes it.
 */
export function traceHash(history: History, eventsRun: number): string {
  const parts: string[] = [String(history.seed), String(eventsRun)];
  for (const op of history.ops) parts.push(opText(op));
  for (const fault of history.faults) parts.push(`${fault.atMs} ${fault.fault} ${fault.target}`);
  let bytes = 0;
  const logHashes: string[] = [];
  for (const log of history.replicaLogs) {
    for (const batch of log.batches) {
      bytes += batch.bytes.length;
      logHashes.push(Bun.hash.xxHash64(batch.bytes).toString(16));
    }
    parts.push(`${log.node} ${log.topic}-${log.partition} ${log.leader} ${log.logStartOffset}..${log.logEndOffset} hw ${log.highWatermark} ${logHashes.splice(0).join(',')}`);
  }
  for (const tier of history.tiered ?? []) {
    const segments = tier.segments.map(
      (segment) => `${segment.baseOffset}..${segment.endOffset} ${segment.uploadId} ${segment.problem ?? segment.batches.map((batch) => Bun.hash.xxHash64(batch.bytes).toString(16)).join(',')}`,
    );
    parts.push(`tier ${tier.topic}-${tier.partition} ${tier.topicId} ${tier.startOffset}..${tier.tieredEnd} ${segments.join(' ')}`);
  }
  for (const write of history.tierWrites ?? []) parts.push(`tier write ${write.atMs} ${write.topicId}/${write.partition} ${write.leaderEpoch} ${JSON.stringify(write.segments)}`);
  for (const probe of history.probes) parts.push(`${probe.topic}-${probe.partition} ${probe.writeAfterMs} ${probe.readAfterMs}`);
  parts.push(String(bytes));
  return Bun.hash.xxHash64(parts.join('\n')).toString(16).padStart(16, '0');
}

/** An op as JSON, bigints as their digits. A replacer costs a call per value, so it runs only for an op that holds a bigint (JSON.stringify throws on one). */
function opText(op: History['ops'][number]): string {
  try {
    return JSON.stringify(op);
  } catch (error) {
    if (!(error instanceof TypeError)) throw error;
    return JSON.stringify(op, (_key, value) => (typeof value === 'bigint' ? value.toString() : value));
  }
}
