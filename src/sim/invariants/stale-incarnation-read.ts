import type { HealthChange } from '../history.ts';
import { type HistoryIndex, metadataPropagationMs } from '../history-index.ts';
import type { ViolationList } from '../violation.ts';

export const STALE_INCARNATION_READ = 'stale-incarnation-read';

/**
 * stale-incarnation-read: once a delete or a create of a topic has taken effect everywhere (its
 * end plus the metadata propagation bound), no broker serves records of the incarnation before
 * it (docs/design.md contract 10). Reads are placed in the incarnation their records were produced in, so
 * a read of an old log served after the bound shows here; within the bound a broker that has not
 * yet seen the change may serve what it has, as Kafka's do. So may a broker that was unhealthy
 * (paused, cut off from the control store) since the change: it has not scanned since, and
 * Kafka does not fence reads by lease either.
 */
export function checkStaleIncarnationRead(index: HistoryIndex, out: ViolationList): void {
  const unhealthy = unhealthySpells(index.history.health);
  const propagationMs = metadataPropagationMs(index.history);
  for (const partition of index.partitions) {
    const overMs = index.incarnations.surelyOverMs(partition.topic, partition.incarnation);
    if (overMs === Infinity) continue;
    for (const op of partition.fetches) {
      if (op.records.length === 0 || op.startMs <= overMs) continue;
      if ((unhealthy.get(op.node) ?? []).some((spell) => spell.fromMs <= op.startMs && spell.toMs >= overMs - propagationMs)) continue;
      const detail = `${op.client} read ${op.records.length} record(s) from offset ${op.records[0]!.offset} of incarnation ${partition.incarnation} from node ${op.node}, ${Math.round(op.startMs - overMs)} ms after that incarnation ended everywhere`;
      out.add(STALE_INCARNATION_READ, partition, 'records of an ended incarnation served', op.records[0]!.offset, detail, op.startMs);
    }
  }
}

/** Each node's spells of ill health, from its health changes (a node is unhealthy until its first healthy change). */
function unhealthySpells(health: readonly HealthChange[]): Map<number, { fromMs: number; toMs: number }[]> {
  const spells = new Map<number, { fromMs: number; toMs: number }[]>();
  const unhealthySince = new Map<number, number | null>(); // null: healthy now
  const close = (node: number, fromMs: number, toMs: number) => {
    if (!spells.has(node)) spells.set(node, []);
    spells.get(node)!.push({ fromMs, toMs });
  };
  for (const change of [...health].sort((a, b) => a.atMs - b.atMs)) {
    const since = unhealthySince.has(change.node) ? unhealthySince.get(change.node)! : -Infinity;
    if (change.healthy && since !== null) close(change.node, since, change.atMs);
    if (change.healthy) unhealthySince.set(change.node, null);
    else if (since === null) unhealthySince.set(change.node, change.atMs);
  }
  for (const [node, since] of unhealthySince) if (since !== null) close(node, since, Infinity);
  return spells;
}
