/**
 * Kafka's default partitioner for keyed records: murmur2 of the key bytes, made positive, modulo
 * the partition count. Matching it means a key lands on the same partition whether it was
 * produced through Ferry's embedded API or by a Kafka client.
 */
const MURMUR2_SEED = 0x9747b28c;
const MURMUR2_M = 0x5bd1e995;
const MURMUR2_R = 24;

/** Kafka's murmur2 hash of `data` (Utils.murmur2), as its default partitioner hashes keys. */
export function murmur2(data: Uint8Array): number {
  const length = data.length;
  let h = (MURMUR2_SEED ^ length) | 0;
  const blocks = length >>> 2;
  for (let i = 0; i < blocks; i++) {
    const at = i * 4;
    let k = data[at]! | (data[at + 1]! << 8) | (data[at + 2]! << 16) | (data[at + 3]! << 24);
    k = Math.imul(k, MURMUR2_M);
    k ^= k >>> MURMUR2_R;
    k = Math.imul(k, MURMUR2_M);
    h = Math.imul(h, MURMUR2_M) ^ k;
  }
  const tail = blocks * 4;
  const rest = length & 3;
  if (rest === 3) h ^= data[tail + 2]! << 16;
  if (rest >= 2) h ^= data[tail + 1]! << 8;
  if (rest >= 1) h = Math.imul(h ^ data[tail]!, MURMUR2_M);
  h ^= h >>> 13;
  h = Math.imul(h, MURMUR2_M);
  h ^= h >>> 15;
  return h | 0;
}

/** The partition Kafka's clients choose for a non-null key. */
export function partitionForKey(key: Uint8Array, partitionCount: number): number {
  return (murmur2(key) & 0x7fffffff) % partitionCount;
}
