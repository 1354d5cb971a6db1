import { assert } from '../util/assert.ts';
import type { HealthChange, RunShape } from './history.ts';

/**
 * A span of simulated time in which every partition, whatever its replica set, keeps at least
 * min.insync.replicas healthy replicas: at most `replicationFactor - minInsyncReplicas` brokers are
 * unhealthy (any RF distinct brokers then include at least min.insync healthy ones). A single
 * broker's window is when it is healthy.
 */
export interface QuorumWindow {
  readonly fromMs: number;
  /** Infinity: the window lasts to the end of the run. */
  readonly toMs: number;
  /** Times strictly inside the window at which some broker's health changed (ascending, distinct). */
  readonly changesMs: readonly number[];
}

/** How many brokers may be unhealthy at once with every partition still holding a min.insync quorum (`minInsync`: a topic's own, default the broker's). */
export function toleratedUnhealthy(shape: RunShape, minInsync = shape.minInsyncReplicas): number {
  if (!shape.cluster) return 0;
  assert(minInsync >= 1 && minInsync <= shape.replicationFactor, 'min.insync.replicas lies in 1..RF');
  assert(shape.replicationFactor <= shape.brokers, 'replicas lie on distinct brokers');
  return shape.replicationFactor - minInsync;
}

/**
 * The quorum windows of a run, by one sweep over its health changes in time order. Changes at the
 * same instant apply together, so a broker failing as another recovers does not split a window.
 */
export function quorumWindows(shape: RunShape, health: readonly HealthChange[], minInsync = shape.minInsyncReplicas): QuorumWindow[] {
  const tolerated = toleratedUnhealthy(shape, minInsync);
  const healthy = new Array<boolean>(shape.brokers + 1).fill(false);
  let unhealthy = shape.brokers;
  const changes = [...health].sort((a, b) => a.atMs - b.atMs);
  const windows: QuorumWindow[] = [];
  let open: { fromMs: number; changesMs: number[] } | null = null;
  for (let i = 0; i < changes.length; ) {
    const atMs = changes[i]!.atMs;
    let changed = false;
    for (; i < changes.length && changes[i]!.atMs === atMs; i++) {
      const { node, healthy: now } = changes[i]!;
      assert(Number.isInteger(node) && node >= 1 && node <= shape.brokers, `health of node ${node}, outside 1..${shape.brokers}`);
      if (healthy[node] === now) continue;
      healthy[node] = now;
      unhealthy += now ? -1 : 1;
      changed = true;
    }
    if (!changed) continue;
    if (open !== null && unhealthy > tolerated) {
      windows.push({ fromMs: open.fromMs, toMs: atMs, changesMs: open.changesMs });
      open = null;
    } else if (open !== null) {
      open.changesMs.push(atMs);
    } else if (unhealthy <= tolerated) {
      open = { fromMs: atMs, changesMs: [] };
    }
  }
  if (open !== null) windows.push({ fromMs: open.fromMs, toMs: Infinity, changesMs: open.changesMs });
  return windows;
}
