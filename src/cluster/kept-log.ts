import type { PartitionLog } from '../log/partition-log.ts';
import { assert } from '../util/assert.ts';

/**
 * docs/tier-protocol.md [K3]: a promoted follower's kept log, after the rebuild applied the chain's
 * frames past its end, may end past `chainEnd` only if it holds records the chain does not (the
 * chain is the whole truth of what was durable, L2): those were never acknowledged by anyone, and
 * the new leader must not serve them, so the log is cut back to the chain's end. A follower only
 * ever applies frames it read from the chain's streams, so this is a guard, not a path.
 */
export function keepOnlyWhatTheChainProves(log: PartitionLog, chainEnd: number, report: (message: string) => void): void {
  if (log.logEndOffset <= chainEnd) return;
  assert(chainEnd >= log.logStartOffset, `the chain ends at ${chainEnd}, below the kept log's start ${log.logStartOffset}`);
  report(`the kept log ends at ${log.logEndOffset}, past the chain's end ${chainEnd}: truncated to it`);
  log.truncateTo(chainEnd);
}
