import type { EpochEntry } from './leader-epoch-cache.ts';

/** Kafka's UNDEFINED_EPOCH and UNDEFINED_EPOCH_OFFSET: "no such epoch", "no end offset". */
export const UNDEFINED_EPOCH = -1;
export const UNDEFINED_EPOCH_OFFSET = -1;

/** An OffsetForLeaderEpoch answer: the largest epoch <= the one asked for, and where it ended. */
export interface EpochEndOffset {
  readonly leaderEpoch: number;
  readonly endOffset: number;
}

const UNDEFINED: EpochEndOffset = { leaderEpoch: UNDEFINED_EPOCH, endOffset: UNDEFINED_EPOCH_OFFSET };

/**
 * Where `requestedEpoch` ended in a log (Kafka's LeaderEpochFileCache.endOffsetFor, KIP-101/320):
 * - the latest epoch ends at the log end offset (it is still being written);
 * - an older epoch ends where the next larger epoch starts, answered with the largest epoch <=
 *   the requested one (a consumer whose position lies past that end offset was truncated);
 * - an epoch older than every epoch still in the log ends at the first one's start;
 * - -1, or an epoch newer than every known epoch, has no answer (-1, -1).
 * `entries` ascend in both epoch and start offset (LeaderEpochCache's invariant). Epochs whose
 * data retention deleted are seen as Kafka's truncateFromStart leaves them: the last epoch that
 * starts at or below the log start offset starts at the log start offset.
 */
export function endOffsetForEpoch(entries: readonly EpochEntry[], requestedEpoch: number, log: { readonly logStartOffset: number; readonly logEndOffset: number }): EpochEndOffset {
  if (requestedEpoch === UNDEFINED_EPOCH) return UNDEFINED;
  const live = entriesFromLogStart(entries, log.logStartOffset);
  if (live.at(-1)?.epoch === requestedEpoch) return { leaderEpoch: requestedEpoch, endOffset: log.logEndOffset };
  const higher = live.find((entry) => entry.epoch > requestedEpoch);
  if (higher === undefined) return UNDEFINED;
  let floor: EpochEntry | undefined;
  for (const entry of live) if (entry.epoch <= requestedEpoch) floor = entry;
  return { leaderEpoch: floor?.epoch ?? requestedEpoch, endOffset: higher.startOffset };
}

function entriesFromLogStart(entries: readonly EpochEntry[], logStartOffset: number): readonly EpochEntry[] {
  let first = 0;
  while (first + 1 < entries.length && entries[first + 1]!.startOffset <= logStartOffset) first++;
  const head = entries[first];
  if (head === undefined || head.startOffset >= logStartOffset) return entries.slice(first);
  return [{ epoch: head.epoch, startOffset: logStartOffset }, ...entries.slice(first + 1)];
}
