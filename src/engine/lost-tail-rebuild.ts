import { rebuildFromChain, rebuildFromTierAndChain, WalPrefixCollectedError } from '../partition/rebuild.ts';
import type { PartitionLog } from '../log/partition-log.ts';
import { componentLogger, type LoggerOption } from '../observability/logger.ts';
import type { ObjectStore } from '../store/object-store.ts';
import type { TierStart } from '../tier/tier-start.ts';
import type { Clock } from '../util/clock.ts';
import type { Random } from '../util/random.ts';
import type { StreamId } from '../wal/keys.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../wal/reader.ts';
import { listEpochs } from '../wal/seal.ts';
import type { TopicId } from '../format/topic-id.ts';
import type { TopicDescription } from './topic-registry.ts';

/** A partition's log that lost its unsynced tail (a power loss) while its WAL kept it: `durableEnd` is the WAL's end. */
export interface LostTail {
  readonly topic: TopicDescription;
  readonly index: number;
  readonly log: PartitionLog;
  readonly durableEnd: number;
}

export interface LostTailRebuildDeps {
  readonly store: ObjectStore;
  /** The current WAL stream's prefix and id: its writer's earlier epochs (sealed by now) hold the tails. */
  readonly prefix: string;
  readonly stream: StreamId;
  readonly clock: Clock;
  /** The readers' retry jitter (the engine's injected source). */
  readonly random: Random;
  readonly report?: LoggerOption | undefined;
  /** Where the partition's tier ends [K2]: a lost range WAL GC collected restarts the log there. Absent without a tier. */
  readonly tierStartOf?: ((topicId: TopicId, partition: number) => Promise<TierStart | null>) | undefined;
}

/**
 * Local logs that end below what this writer's earlier streams (sealed by now) hold of them: a
 * power loss dropped their unsynced tails (with a WAL the log need not be synced, KIP-1176). Each
 * tail is read back from those streams by the same rebuild and apply as a takeover's, so the
 * records acks=all acknowledged are served again and their producers' retries are duplicates;
 * then `serve` takes the log (it throws if the streams did not hold it all). Reads every earlier
 * stream from its WAL floor: costly, but only after a power loss. When the lost range starts below
 * the tier's end and WAL GC collected it (docs/tier-protocol.md [G4]), the log starts over at the
 * tier's end, as on a fresh disk [K2], and takes the rest from the floors. On failure every log is closed.
 */
export async function rebuildLostTails(lost: readonly LostTail[], deps: LostTailRebuildDeps, serve: (tail: LostTail) => void): Promise<void> {
  if (lost.length === 0) return;
  try {
    await rebuildEach(lost, deps, serve);
  } catch (error) {
    for (const { log } of lost) await log.close().catch(() => {}); // closing one twice is a no-op
    throw error;
  }
}

async function rebuildEach(lost: readonly LostTail[], deps: LostTailRebuildDeps, serve: (tail: LostTail) => void): Promise<void> {
  const { store, prefix, stream } = deps;
  const logger = componentLogger(deps.report, 'wal');
  const chain = (await listEpochs(store, prefix, stream.writerId)).filter((epoch) => epoch < stream.epoch).map((epoch) => ({ writerId: stream.writerId, epoch }));
  for (const tail of lost) {
    const { topic, index, log, durableEnd } = tail;
    const wanted = (_name: string, partition: number, topicId: TopicId) => topicId === topic.id && partition === index;
    const reader = new WalReader(store, { ...DEFAULT_WAL_READER_CONFIG, prefix, wants: wanted }, { clock: deps.clock, random: deps.random });
    const endBefore = log.logEndOffset;
    const fields = { topic: topic.name, partition: index, endBefore, durableEnd };
    try {
      await rebuildFromChain(reader, log, chain, topic.id);
      // A chain whose every object holding the lost frames was collected shows no frame above the
      // log's end: only the shortfall says GC took them (tiered first, [G4]). Seed 5268: the broker
      // restarted at 0 below 143 acknowledged offsets and never served again.
      if (log.logEndOffset < durableEnd) throw new WalPrefixCollectedError(`the WAL streams hold nothing of ${log.logEndOffset}..${durableEnd}`);
    } catch (error) {
      const tierStartOf = deps.tierStartOf;
      if (!(error instanceof WalPrefixCollectedError) || tierStartOf === undefined) throw error;
      logger.warn({ ...fields, err: error }, `${topic.name}-${index}: the local log lost offsets from ${endBefore} that WAL GC collected (${error.message}): it starts over at the tier's end`);
      await rebuildFromTierAndChain(
        reader,
        log,
        chain,
        topic.id,
        () => tierStartOf(topic.id, index),
        (message) => logger.warn(fields, message),
      );
    }
    logger.warn(
      { ...fields, logEndOffset: log.logEndOffset },
      `${topic.name}-${index}: the local log ended at ${endBefore}, below the ${durableEnd} its WAL holds (a power loss): rebuilt up to ${log.logEndOffset} from the WAL`,
    );
    serve(tail);
  }
}
