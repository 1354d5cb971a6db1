// A partition's WAL chain written by the real engine, one batch per WAL object, for tests that
// simulate WAL GC by deleting a covered prefix of its streams by hand (docs/tier-protocol.md [G4]).
import { Engine } from '../../src/engine/index.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import type { PartitionLog } from '../../src/log/partition-log.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { concatBytes } from '../../src/util/bytes.ts';
import type { Uuid } from '../../src/util/uuid.ts';
import type { StreamId } from '../../src/wal/keys.ts';
import { walObjectKey } from '../../src/wal/keys.ts';
import { ensureSealed } from '../../src/wal/seal.ts';
import { tempDir } from './temp-dir.ts';

const UPLOAD_INTERVAL_MS = 100;

export interface WalChain {
  readonly topicId: Uuid;
  readonly clock: ManualClock;
  /** Oldest first; every stream sealed. */
  readonly chain: StreamId[];
  /** Per stream, the offset each of its data objects holds (object i holds offsets[i]). */
  readonly offsets: number[][];
}

/**
 * Topic `t`, partition 0: `perStream[i]` one-record batches in stream i (one engine opening per
 * stream, each a new writer epoch), each batch its own WAL object, every stream sealed.
 */
export async function writeWalChain(store: ObjectStore, perStream: readonly number[]): Promise<WalChain> {
  const clock = new ManualClock();
  const directory = tempDir();
  const chain: StreamId[] = [];
  const offsets: number[][] = [];
  let topicId: Uuid | null = null;
  let next = 0;
  for (const count of perStream) {
    const ferry = await Engine.open({ directory, clock, wal: { store, writerId: 'w', config: { uploadIntervalMs: UPLOAD_INTERVAL_MS } } });
    topicId ??= ferry.createTopic('t').id;
    const stream = ferry.wal!.config.stream;
    const held: number[] = [];
    for (let i = 0; i < count; i++) {
      const appended = await ferry.appendBatches('t', 0, buildRecordBatch([{ value: `r${next}` }], { nowMs: clock.nowMs() }));
      clock.advance(UPLOAD_INTERVAL_MS); // each batch in its own WAL object
      await appended.committed;
      held.push(next++);
    }
    await ferry.close();
    await ensureSealed(store, '', stream, { writerId: 'successor', nowMs: clock.nowMs() });
    chain.push(stream);
    offsets.push(held);
  }
  return { topicId: topicId!, clock, chain, offsets };
}

/** GC by hand: deletes objects 0..count-1 of the stream, oldest first [G4]. */
export async function collectPrefix(store: ObjectStore, stream: StreamId, count: number): Promise<void> {
  for (let sequence = 0; sequence < count; sequence++) await store.delete(walObjectKey('', stream, sequence));
}

/** The log's batches from `offset` to its end, as one byte string. */
export function bytesFrom(log: PartitionLog, offset: number): Uint8Array {
  const parts: Uint8Array[] = [];
  for (let at = offset; at < log.logEndOffset; ) {
    const { batches } = log.read(at, 1 << 20);
    for (const batch of batches) parts.push(batch.bytes);
    at = batches.at(-1)!.lastOffset + 1;
  }
  return concatBytes(parts);
}
