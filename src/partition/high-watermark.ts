/**
 * The leader's high watermark, Kafka's rule: the end of what is durable in object storage and
 * applied by every in-sync follower, and it moves only while at least `requiredFollowers` are in
 * sync (min.insync.replicas counts the leader, so `requiredFollowers` is min.insync.replicas - 1).
 * With none required, what is durable is committed (KIP-1176: the object store is the durability).
 * -1: nothing can be committed now. Pure, so the rule is tested on its own.
 */
export function leaderHighWatermark(durableEnd: number, inSyncEnds: Iterable<number>, requiredFollowers: number): number {
  if (requiredFollowers <= 0) return durableEnd;
  const ends = [...inSyncEnds];
  if (ends.length < requiredFollowers) return -1;
  return Math.min(durableEnd, ...ends);
}

/** A follower serves reads up to what it applied, and never past the leader's high watermark it knows. */
export function followerHighWatermark(logEndOffset: number, leaderHighWatermark: number | null): number {
  return leaderHighWatermark === null ? logEndOffset : Math.min(logEndOffset, leaderHighWatermark);
}
