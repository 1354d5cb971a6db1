import type { Random } from '../util/random.ts';

/** One of `items`, each as likely as its weight (one draw of `random`); null, drawing nothing, when there is none. */
export function drawWeighted<T extends { readonly weight: number }>(random: Random, items: readonly T[]): T | null {
  if (items.length === 0) return null;
  const total = items.reduce((sum, item) => sum + item.weight, 0);
  let draw = random.next() * total;
  for (const item of items) {
    draw -= item.weight;
    if (draw < 0) return item;
  }
  return items.at(-1)!;
}
