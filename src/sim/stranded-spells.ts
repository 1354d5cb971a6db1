import type { StrandedChange } from './history.ts';

/** A span in which one broker was stranded (see StrandedChange); toMs Infinity: to the end of the run. */
export interface StrandedSpell {
  readonly fromMs: number;
  readonly toMs: number;
}

/** Each node's stranded spells, from its changes (a node is not stranded until its first `stranded: true`). */
export function strandedSpells(changes: readonly StrandedChange[]): Map<number, StrandedSpell[]> {
  const spells = new Map<number, StrandedSpell[]>();
  const since = new Map<number, number>(); // nodes stranded now, and since when
  for (const change of [...changes].sort((a, b) => a.atMs - b.atMs)) {
    const from = since.get(change.node);
    if (change.stranded && from === undefined) since.set(change.node, change.atMs);
    if (!change.stranded && from !== undefined) {
      since.delete(change.node);
      spellsOf(spells, change.node).push({ fromMs: from, toMs: change.atMs });
    }
  }
  for (const [node, from] of since) spellsOf(spells, node).push({ fromMs: from, toMs: Infinity });
  return spells;
}

/** Whether `node` was stranded at `atMs` (a spell holds from its start, inclusive, to its end, exclusive). */
export function strandedAt(spells: ReadonlyMap<number, readonly StrandedSpell[]>, node: number, atMs: number): boolean {
  return (spells.get(node) ?? []).some((spell) => spell.fromMs <= atMs && atMs < spell.toMs);
}

function spellsOf(spells: Map<number, StrandedSpell[]>, node: number): StrandedSpell[] {
  let list = spells.get(node);
  if (list === undefined) spells.set(node, (list = []));
  return list;
}
