import type { HealthChange } from './history.ts';

/** A node's healthy spells: [fromMs, toMs), toMs Infinity for the last one if it lasts. */
interface Spell {
  readonly fromMs: number;
  readonly toMs: number;
}

/**
 * How old a broker's view of records it reads again and again (the ACLs, the SCRAM credentials)
 * may be at a moment. A broker healthy for a whole propagation bound that ended at some τ had read
 * them anew within it (brokers read them every second, and try a failed read again), and a view
 * only moves forward (each read replaces the last; a process that starts reads them all before it
 * serves). So what it decides by at t is what the records held at some moment at or after the
 * floor: the latest such τ at or before t, less the bound; -Infinity if it never was healthy that
 * long before t (or the node is unknown, -1). A broker healthy since the bound before t has the
 * floor t - bound.
 */
export function viewFloorOf(health: readonly HealthChange[], boundMs: number): (node: number, atMs: number) => number {
  const spells = spellsByNode(health);
  return (node, atMs) => {
    const own = spells.get(node) ?? [];
    for (let i = own.length - 1; i >= 0; i--) {
      const spell = own[i]!;
      if (spell.fromMs > atMs) continue;
      const until = Math.min(spell.toMs, atMs);
      if (until - spell.fromMs >= boundMs) return until - boundMs;
    }
    return -Infinity;
  };
}

function spellsByNode(health: readonly HealthChange[]): Map<number, Spell[]> {
  const byNode = new Map<number, Spell[]>();
  const openSince = new Map<number, number>();
  for (const change of [...health].sort((a, b) => a.atMs - b.atMs)) {
    const since = openSince.get(change.node);
    if (change.healthy && since === undefined) openSince.set(change.node, change.atMs);
    if (change.healthy || since === undefined) continue;
    openSince.delete(change.node);
    let spells = byNode.get(change.node);
    if (spells === undefined) byNode.set(change.node, (spells = []));
    spells.push({ fromMs: since, toMs: change.atMs });
  }
  for (const [node, since] of openSince) {
    let spells = byNode.get(node);
    if (spells === undefined) byNode.set(node, (spells = []));
    spells.push({ fromMs: since, toMs: Infinity });
  }
  return byNode;
}
