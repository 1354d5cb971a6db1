// A hand-built WAL stream and a GI1 world (tier ends, topics, in-sync followers) for collector tests.
import type { MemoryStore } from '../../src/store/memory.ts';
import { EMPTY_TIER_RECORD, type TierRecord } from '../../src/tier/tier-record.ts';
import { concatBytes } from '../../src/util/bytes.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import type { Uuid } from '../../src/util/uuid.ts';
import { encodeSeal, WalObjectBuilder } from '../../src/wal/format.ts';
import { WalCollector, type WalCollectorOptions } from '../../src/wal-gc/collector.ts';
import type { CoverageSources, IncarnationState } from '../../src/wal-gc/coverage.ts';
import { type StreamId, walObjectKey } from '../../src/wal/keys.ts';
import { listWithMark } from '../../src/wal/floor.ts';
import { batchOf } from '../support/batches.ts';
import { idOf } from '../support/topic-ids.ts';

export const PREFIX = ''; // as the simulation's brokers write (keys wal/...)
export const WRITER = 'broker-1';
export const TOPIC = 't';
export const TOPIC_ID = idOf(TOPIC);

export interface FrameSpec {
  readonly topic?: string;
  readonly topicId?: Uuid;
  readonly partition?: number;
  readonly baseOffset: number;
  readonly lastOffset: number;
}

/** Puts a data object holding `frames` at `sequence` of `stream`. */
export async function putData(store: MemoryStore, stream: StreamId, sequence: number, frames: readonly FrameSpec[]): Promise<void> {
  const builder = new WalObjectBuilder({ kind: 'data', writerId: stream.writerId, epoch: stream.epoch, sequence, createdMs: 0 });
  for (const frame of frames) {
    builder.addFrame({
      topic: frame.topic ?? TOPIC,
      topicId: frame.topicId ?? TOPIC_ID,
      partition: frame.partition ?? 0,
      leaderEpoch: 0,
      baseOffset: frame.baseOffset,
      lastOffset: frame.lastOffset,
      data: batchOf(`r${frame.baseOffset}`, frame.lastOffset - frame.baseOffset + 1),
    });
  }
  await store.put(walObjectKey(PREFIX, stream, sequence), concatBytes(builder.finish()));
}

/** Objects 0..count-1 of `stream`, object i holding offsets [10 i, 10 i + 9] of partition 0. */
export async function putStream(store: MemoryStore, stream: StreamId, count: number): Promise<void> {
  for (let sequence = 0; sequence < count; sequence++) await putData(store, stream, sequence, [{ baseOffset: 10 * sequence, lastOffset: 10 * sequence + 9 }]);
}

export async function putSeal(store: MemoryStore, stream: StreamId, sequence: number): Promise<void> {
  await store.put(walObjectKey(PREFIX, stream, sequence), encodeSeal({ writerId: 'broker-2', epoch: stream.epoch, sequence, createdMs: 0 }));
}

/** Every object of the stream still in the store, below its floor mark too (what GC deleted, not what readers see). */
export async function present(store: MemoryStore, stream: StreamId): Promise<number[]> {
  return [...(await listWithMark(store, PREFIX, stream)).sequences].sort((a, b) => a - b);
}

/** What GI1 reads, set by the test: tier ends per partition, deleted incarnations, in-sync followers' lowest end. */
export class World implements CoverageSources {
  readonly tieredEnds = new Map<string, number>();
  readonly deleted = new Set<Uuid>();
  /** Incarnations no record names (DI1: their frames stay). */
  readonly unknown = new Set<Uuid>();
  /** Per partition led here: the lowest in-sync follower end (Infinity: none in sync); absent: not led here. */
  readonly followers = new Map<string, number>();
  tierReads = 0;

  setTieredEnd(end: number, partition = 0, topicId = TOPIC_ID): void {
    this.tieredEnds.set(`${topicId}/${partition}`, end);
  }

  lead(followersEnd: number, partition = 0, topicId = TOPIC_ID): void {
    this.followers.set(`${topicId}/${partition}`, followersEnd);
  }

  async readTierRecord(topicId: Uuid, partition: number): Promise<TierRecord> {
    this.tierReads++;
    const end = this.tieredEnds.get(`${topicId}/${partition}`) ?? 0;
    return end === 0
      ? EMPTY_TIER_RECORD
      : { leaderEpoch: 0, startOffset: 0, segments: [{ state: 'copied', baseOffset: 0, endOffset: end, uploadId: 'u', leaderEpoch: 0, bytes: 1, maxTimestamp: 0, epochs: [], sections: {} }] };
  }

  async incarnationState(_topic: string, topicId: Uuid): Promise<IncarnationState> {
    if (this.deleted.has(topicId)) return 'deleted';
    return this.unknown.has(topicId) ? 'unknown' : 'live';
  }

  tieringEnabled(): boolean {
    return true;
  }

  inSyncFollowersEnd(topicId: Uuid, partition: number): number | null {
    return this.followers.get(`${topicId}/${partition}`) ?? null;
  }
}

export function collectorOf(store: MemoryStore, world: CoverageSources, currentEpoch: number | null, options: Partial<WalCollectorOptions> = {}): WalCollector {
  return new WalCollector({ store, prefix: PREFIX, writerId: WRITER, currentEpoch: () => currentEpoch, coverage: world, clock: new ManualClock(), random: new SeededRandom(1), ...options });
}
