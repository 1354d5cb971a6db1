/**
 * The leader's high watermark: the end of what is both durable in object storage and applied by
 * enough followers (Kafka's min.insync.replicas counts the leader, so `requiredFollowers` is
 * min.insync.replicas - 1). Pure, so the rule is tested on its own.
 */
export function leaderHighWatermark(durableEnd: number, followerEnds: Iterable<number>, requiredFollowers: number): number {
  if (requiredFollowers <= 0) return durableEnd;
  const ends = [...followerEnds].sort((a, b) => b - a);
  const quorumEnd = ends[requiredFollowers - 1];
  return quorumEnd === undefined ? -1 : Math.min(durableEnd, quorumEnd);
}

/** A follower serves reads up to what it applied, and never past the leader's high watermark it knows. */
export function followerHighWatermark(logEndOffset: number, leaderHighWatermark: number | null): number {
  return leaderHighWatermark === null ? logEndOffset : Math.min(logEndOffset, leaderHighWatermark);
}
