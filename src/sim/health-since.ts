import type { HealthChange } from './history.ts';

/** For a node and a moment: since when the node has been healthy without a break (Infinity: not healthy then). */
export function healthySinceOf(health: readonly HealthChange[]): (node: number, atMs: number) => number {
  const byNode = new Map<number, HealthChange[]>();
  for (const change of [...health].sort((a, b) => a.atMs - b.atMs)) {
    let changes = byNode.get(change.node);
    if (changes === undefined) byNode.set(change.node, (changes = []));
    changes.push(change);
  }
  return (node, atMs) => {
    let since = Infinity; // every node is unhealthy at the start until its first healthy change
    for (const change of byNode.get(node) ?? []) {
      if (change.atMs > atMs) break;
      if (!change.healthy) since = Infinity;
      else if (since === Infinity) since = change.atMs;
    }
    return since;
  };
}
