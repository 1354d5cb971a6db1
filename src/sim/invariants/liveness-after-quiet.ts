import type { HistoryIndex } from '../history-index.ts';
import type { ViolationList } from '../violation.ts';

export const LIVENESS_AFTER_QUIET = 'liveness-after-quiet';

/**
 * liveness-after-quiet: once faults stop, every partition of the final logs accepts an acks=all
 * write and serves a read within History.livenessBoundMs.
 */
export function checkLivenessAfterQuiet(index: HistoryIndex, out: ViolationList): void {
  const { history } = index;
  const bound = history.livenessBoundMs;
  const probed = new Set<string>();
  for (const probe of history.probes) {
    probed.add(`${probe.topic}\u0000${probe.partition}`);
    const where = { topic: probe.topic, incarnation: index.incarnations.last(probe.topic), partition: probe.partition };
    const atMs = history.quietFromMs + bound;
    if (probe.writeAfterMs === null || probe.writeAfterMs > bound) {
      out.add(LIVENESS_AFTER_QUIET, where, 'no acks=all write', null, `first acknowledged write after ${probe.writeAfterMs ?? 'never'} ms, bound ${bound} ms`, atMs);
    }
    if (probe.readAfterMs === null || probe.readAfterMs > bound) {
      out.add(LIVENESS_AFTER_QUIET, where, 'no read', null, `first read after ${probe.readAfterMs ?? 'never'} ms, bound ${bound} ms`, atMs);
    }
  }
  for (const partition of index.partitions) {
    if (partition.replicaLogs.length > 0 && !probed.has(`${partition.topic}\u0000${partition.partition}`)) {
      out.add(LIVENESS_AFTER_QUIET, partition, 'never probed', null, 'a partition of the final logs has no probe result');
    }
  }
}
