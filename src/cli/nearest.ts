/** Typo suggestions for unknown names (config keys, flags, commands): the closest known one, if close enough. */

/** Suggest a known name at most this many edits away from an unknown one. */
export const SUGGESTION_EDITS_MAX = 3;

/** The candidate fewest edits from `name`, if that is few enough to be a typo (a third of its length, at most SUGGESTION_EDITS_MAX). */
export function nearest(name: string, candidates: Iterable<string>): string | null {
  let best: string | null = null;
  let bestEdits = Math.min(SUGGESTION_EDITS_MAX, Math.floor(name.length / 3)) + 1;
  for (const candidate of candidates) {
    const edits = editDistance(name, candidate, bestEdits);
    if (edits < bestEdits) {
      best = candidate;
      bestEdits = edits;
    }
  }
  return best;
}

/** Levenshtein distance, cut off at `limit` (returned when it would be at least that). */
export function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) >= limit) return limit;
  let previous = Array.from({ length: b.length + 1 }, (_, index) => index);
  for (let i = 1; i <= a.length; i++) {
    const current = [i];
    for (let j = 1; j <= b.length; j++) current[j] = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    previous = current;
  }
  return Math.min(previous[b.length]!, limit);
}
