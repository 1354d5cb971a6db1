// Review 27j (f6305a9): the tierer's producer state is now brought forward by the batches the
// upload reads (PartitionLog.producerReplayFrom) and encoded at the end by the replay's
// snapshotAt. That end step checks the offset but not that the log is still open: an upload that
// outlives its log (the partition closed under it, its directory removed and rebuilt by a later
// adoption from the tier) writes `<end>.snapshot` into the directory it no longer owns and deletes
// the "stale" snapshots below it there, the new log's start snapshot (the only copy of the
// producers below its start) among them. Before, producerSnapshotAt(end) threw Closed and the
// upload failed without touching the directory.
import { expect, test } from 'bun:test';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { ControlStore } from '../../src/control/control-store.ts';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { snapshotFileName } from '../../src/log/producer-state.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { MultipartOptions, PutResult, SequentialWrite } from '../../src/store/object-store.ts';
import { TierRecords } from '../../src/tier/tier-record.ts';
import { Tierer, type TierSource } from '../../src/tier/tierer.ts';
import { type Disk, systemDisk } from '../../src/util/disk.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { idOf } from '../support/topic-ids.ts';
import { tempDir } from '../support/temp-dir.ts';

const TOPIC_ID = idOf('review-27j-closed');
const T0 = 1_700_000_000_000;
/** Two batches of this size: the upload reads them as two chunks and its first append (a gate) follows the last read. */
const BIG_VALUE_BYTES = 600 * 1024;
const PRODUCER_Q = 8;
const PRODUCER_P = 7;

/** A store that writes objects front to back (as the file store does), whose first append waits for `gate`. */
class GatedSequentialStore extends MemoryStore {
  gate: (() => Promise<void>) | null = null;

  openSequentialWrite(key: string, options?: MultipartOptions): Promise<SequentialWrite> {
    const parts: Uint8Array[] = [];
    const append = async (chunks: readonly Uint8Array[]): Promise<void> => {
      const gate = this.gate;
      this.gate = null;
      if (gate !== null) await gate();
      for (const chunk of chunks) parts.push(chunk.slice());
    };
    const finish = (): Promise<PutResult> => this.put(key, Buffer.concat(parts), options?.ifNoneMatch === '*' ? { ifNoneMatch: '*' } : {});
    return Promise.resolve({ key, append, finish, abort: async () => {} });
  }
}

function batch(producerId: number, sequence: number, valueBytes: number): Uint8Array {
  return buildRecordBatch([{ value: 'x'.repeat(valueBytes), timestamp: T0 }], { nowMs: T0, producerId, producerEpoch: 0, baseSequence: sequence });
}

test('an upload whose log closed under it leaves the directory alone: the next log there keeps its start snapshot and de-duplicates', async () => {
  const clock = new ManualClock(T0);
  const directory = join(tempDir(), 't-0');
  // A crash is a log abandoned unclosed: its lock is not held, so the next open can take the directory.
  const disk: Disk = { ...systemDisk, lockSync: () => () => {} };
  const a = PartitionLog.open(directory, { clock, disk });
  a.append(batch(PRODUCER_Q, 0, BIG_VALUE_BYTES), 1); // offset 0: Q's only batch, acknowledged
  a.append(batch(PRODUCER_P, 0, BIG_VALUE_BYTES), 1); // offset 1
  const stateAt1 = a.producerSnapshotAt(1); // what the tier's segment ending at 1 carries
  const store = new GatedSequentialStore();
  const records = new TierRecords(new ControlStore(new MemoryStore(), 'cluster'));
  const source: TierSource = { topic: 't', topicId: TOPIC_ID, partition: 0, leaderEpoch: 1, log: a, highWatermark: a.logEndOffset };
  let reads = 0;
  const read = a.read.bind(a);
  a.read = (offset, maxBytes, allocate) => {
    reads++;
    return read(offset, maxBytes, allocate);
  };
  let b: PartitionLog | null = null;
  store.gate = async () => {
    expect(reads).toBe(2); // the upload has read its whole range [0, 2)
    // Leadership moves: the partition closes here, and is later adopted again, rebuilt from the tier at offset 1.
    await a.close();
    rmSync(directory, { recursive: true, force: true });
    mkdirSync(directory, { recursive: true });
    b = PartitionLog.open(directory, { clock, disk });
    b.startAt(1, [{ epoch: 1, startOffset: 0 }], stateAt1);
  };
  const tierer = new Tierer({ store, prefix: 'tiered', records, clock, random: new SeededRandom(27), partitions: () => [source], tailMaxBytes: 1 });
  await tierer.tierDue();
  expect(store.gate).toBeNull(); // the gate ran
  // The rebuilt log's start snapshot holds Q (its batch lies below the log start): nothing but this log may remove it.
  expect(existsSync(join(directory, snapshotFileName(1)))).toBe(true);
  // The broker crashes before anything else is written, and opens the log again.
  const reopened = PartitionLog.open(directory, { clock, disk });
  expect(reopened.activeProducers().map((producer) => producer.producerId)).toContain(PRODUCER_Q);
  const retry = reopened.append(batch(PRODUCER_Q, 0, BIG_VALUE_BYTES), 2); // Q retries its acknowledged batch
  expect(retry.duplicate).toBe(true);
  expect(retry.baseOffset).toBe(0);
  await reopened.close();
  void b;
});
