import { loggerOf } from '../observability/logger.ts';
import { checkConditionalWrites } from '../store/conditional-check.ts';
import type { Clock } from '../util/clock.ts';
import type { BrokerOptions } from './broker-options.ts';

/**
 * Refuses to start on a store that ignores conditional writes (src/store/conditional-check.ts):
 * the WAL store whenever there is one (its streams are fenced by create-if-absent) and the
 * cluster's control store (compare-and-swap). `unsafeStore` skips the check, loudly.
 */
export async function checkStores(options: BrokerOptions, clock: Clock): Promise<void> {
  const wal = options.engine.wal;
  if (options.unsafeStore === true) {
    loggerOf(options.log).warn({ component: 'store' }, 'unsafe store: conditional writes are not checked; fencing and compare-and-swap may not hold (one broker only)');
    return;
  }
  const probeId = `${wal?.writerId ?? `node-${options.nodeId}`}-${clock.nowMs()}`;
  if (wal !== undefined) await checkConditionalWrites(wal.store, wal.prefix ?? '', probeId, 'WAL');
  const cluster = options.cluster;
  if (cluster !== undefined && cluster.store !== wal?.store) await checkConditionalWrites(cluster.store, cluster.prefix ?? '', probeId, 'cluster');
}
