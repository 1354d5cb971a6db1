import { ACK_AFTER_DURABLE, checkAckAfterDurable } from './invariants/ack-after-durable.ts';
import { checkStaleIncarnationRead, STALE_INCARNATION_READ } from './invariants/stale-incarnation-read.ts';
import type { History } from './history.ts';
import { type HistoryIndex, indexHistory } from './history-index.ts';
import { ACKED_DURABLE, checkAckedDurable } from './invariants/acked-durable.ts';
import { ACKS_ALL_MIN_INSYNC, checkAcksAllMinInsync } from './invariants/acks-all-min-insync.ts';
import { ACKS_RESUME_WITH_QUORUM, checkAcksResumeWithQuorum } from './invariants/acks-resume-with-quorum.ts';
import { ACKED_READABLE, checkAckedReadable } from './invariants/acked-readable.ts';
import { checkCommitsMonotonic, COMMITS_MONOTONIC } from './invariants/commits-monotonic.ts';
import { checkCommitCurrentGeneration, COMMIT_CURRENT_GENERATION } from './invariants/commit-current-generation.ts';
import { checkFetchedOffsetCommitted, FETCHED_OFFSET_COMMITTED } from './invariants/fetched-offset-committed.ts';
import { checkFollowerPrefix, FOLLOWER_PREFIX } from './invariants/follower-prefix.ts';
import { checkHighWatermarkMonotonic, HIGH_WATERMARK_MONOTONIC } from './invariants/high-watermark-monotonic.ts';
import { checkIdempotentNoDuplicates, IDEMPOTENT_NO_DUPLICATES } from './invariants/idempotent-no-duplicates.ts';
import { checkLivenessAfterQuiet, LIVENESS_AFTER_QUIET } from './invariants/liveness-after-quiet.ts';
import { checkOffsetUnique, OFFSET_UNIQUE } from './invariants/offset-unique.ts';
import { checkReadDurable, READ_DURABLE } from './invariants/read-durable.ts';
import { checkTierFenced, TIER_FENCED } from './invariants/tier-fenced.ts';
import { checkTieredBytesMatch, TIERED_BYTES_MATCH } from './invariants/tiered-bytes-match.ts';
import { checkWalGcNeeded, WAL_GC_NEEDED } from './invariants/wal-gc-needed.ts';
import { checkDeleteRecordsFloor, DELETE_RECORDS_FLOOR } from './invariants/delete-records-floor.ts';
import { checkPartitionCountMonotonic, PARTITION_COUNT_MONOTONIC } from './invariants/partition-count-monotonic.ts';
import { CONFIG_APPLIED, checkConfigApplied } from './invariants/config-applied.ts';
import { AUTH_REFUSED, checkAuthRefused } from './invariants/auth-refused.ts';
import { AUTH_ACCEPTED, checkAuthAccepted } from './invariants/auth-accepted.ts';
import { checkIntruderNoData, INTRUDER_NO_DATA } from './invariants/intruder-no-data.ts';
import { ACL_ENFORCED, checkAclEnforced } from './invariants/acl-enforced.ts';
import { checkProducerIdUnique, PRODUCER_ID_UNIQUE } from './invariants/producer-id-unique.ts';
import { ANSWER_ALLOWED, checkAnswerAllowed } from './invariants/answer-allowed.ts';
import { checkIdempotentRetryAnswer, IDEMPOTENT_RETRY_ANSWER } from './invariants/idempotent-retry-answer.ts';
import { checkLeaderWithinLease, LEADER_WITHIN_LEASE } from './invariants/leader-within-lease.ts';
import { checkQuotaThrottle, QUOTA_THROTTLE } from './invariants/quota-throttle.ts';
import { checkRetentionKept, RETENTION_KEPT } from './invariants/retention-kept.ts';
import { type Violation, ViolationList } from './violation.ts';

export type { Violation } from './violation.ts';
export { formatViolation } from './trace.ts';

/** One invariant: its name (what a violation prints) and the check that reports into a list. */
export interface Invariant {
  readonly name: string;
  readonly check: (index: HistoryIndex, out: ViolationList) => void;
}

/**
 * Every invariant the checker judges a run by; each is documented in its file under invariants/.
 * To add one: write invariants/<name>.ts exporting its name and a check over the HistoryIndex
 * (add to History, and to the index, whatever it needs), list it here, and give it a passing and
 * a broken hand-built history in test/sim/checker.test.ts.
 */
export const INVARIANTS: readonly Invariant[] = [
  { name: ACKED_DURABLE, check: checkAckedDurable },
  { name: OFFSET_UNIQUE, check: checkOffsetUnique },
  { name: IDEMPOTENT_NO_DUPLICATES, check: checkIdempotentNoDuplicates },
  { name: HIGH_WATERMARK_MONOTONIC, check: checkHighWatermarkMonotonic },
  { name: FOLLOWER_PREFIX, check: checkFollowerPrefix },
  { name: COMMITS_MONOTONIC, check: checkCommitsMonotonic },
  { name: COMMIT_CURRENT_GENERATION, check: checkCommitCurrentGeneration },
  { name: FETCHED_OFFSET_COMMITTED, check: checkFetchedOffsetCommitted },
  { name: LIVENESS_AFTER_QUIET, check: checkLivenessAfterQuiet },
  { name: ACKED_READABLE, check: checkAckedReadable },
  { name: READ_DURABLE, check: checkReadDurable },
  { name: ACKS_RESUME_WITH_QUORUM, check: checkAcksResumeWithQuorum },
  { name: STALE_INCARNATION_READ, check: checkStaleIncarnationRead },
  { name: ACK_AFTER_DURABLE, check: checkAckAfterDurable },
  { name: ACKS_ALL_MIN_INSYNC, check: checkAcksAllMinInsync },
  { name: TIERED_BYTES_MATCH, check: checkTieredBytesMatch },
  { name: TIER_FENCED, check: checkTierFenced },
  { name: WAL_GC_NEEDED, check: checkWalGcNeeded },
  { name: DELETE_RECORDS_FLOOR, check: checkDeleteRecordsFloor },
  { name: PARTITION_COUNT_MONOTONIC, check: checkPartitionCountMonotonic },
  { name: CONFIG_APPLIED, check: checkConfigApplied },
  { name: INTRUDER_NO_DATA, check: checkIntruderNoData },
  { name: AUTH_REFUSED, check: checkAuthRefused },
  { name: AUTH_ACCEPTED, check: checkAuthAccepted },
  { name: ACL_ENFORCED, check: checkAclEnforced },
  { name: PRODUCER_ID_UNIQUE, check: checkProducerIdUnique },
  { name: ANSWER_ALLOWED, check: checkAnswerAllowed },
  { name: IDEMPOTENT_RETRY_ANSWER, check: checkIdempotentRetryAnswer },
  { name: LEADER_WITHIN_LEASE, check: checkLeaderWithinLease },
  { name: QUOTA_THROTTLE, check: checkQuotaThrottle },
  { name: RETENTION_KEPT, check: checkRetentionKept },
];

/**
 * Judges a run from its history alone (pure: same history, same violations, in the same order).
 * The history is indexed by partition incarnation once; each invariant then walks only what it
 * needs, so a run of thousands of ops checks in milliseconds.
 */
export function check(history: History): Violation[] {
  const index = indexHistory(history);
  const out = new ViolationList();
  for (const invariant of INVARIANTS) invariant.check(index, out);
  return out.toArray();
}
