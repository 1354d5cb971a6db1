/**
 * The broker every broker picks for `key` (a consumer group, an orphaned WAL writer id): the live
 * brokers by node id, indexed by a hash of the key. Every broker computes the same choice from the
 * same records; null when none is live.
 */
export function pickByHash<T extends { readonly nodeId: number }>(key: string, live: readonly T[]): T | null {
  if (live.length === 0) return null;
  const sorted = [...live].sort((a, b) => a.nodeId - b.nodeId);
  let hash = 0;
  for (let i = 0; i < key.length; i++) hash = (Math.imul(hash, 31) + key.charCodeAt(i)) | 0;
  return sorted[(hash >>> 0) % sorted.length]!;
}
