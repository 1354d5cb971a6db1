// Adversarial review of PartitionLog.startAt under power loss (docs/tier-protocol.md [K2]): a
// broker that rebuilt from the tier's end on a disk holding an older local copy of the partition
// loses power at every durability barrier of the start-over; each image must open, and the
// rebuild redone on it must give the log the tier's end, epochs and producers.
import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { diskWithSync, systemDisk } from '../../src/util/disk.ts';
import type { FileSync } from '../../src/util/file-sync.ts';
import { PowerLossRecorder, restoreSyncedState } from '../support/power-loss.ts';
import { tempDir } from '../support/temp-dir.ts';

const T0 = 1_700_000_000_000;
const TIERED_END = 20;

function idempotent(sequence: number): Uint8Array {
  return buildRecordBatch([{ value: `p-${sequence}`, timestamp: T0 }], { nowMs: T0, producerId: 5, producerEpoch: 0, baseSequence: sequence });
}

/** A recorder that, after every barrier, keeps the image a power cut at that moment leaves. */
function cuttingAtEveryBarrier(root: string, journal: string, images: string[]): FileSync {
  const recorder = new PowerLossRecorder(root, journal);
  const cut = (): void => {
    const image = tempDir('ferry-review-cut-');
    restoreSyncedState(journal, image);
    images.push(image);
  };
  return {
    syncSync: (fd) => (recorder.syncSync(fd), cut()),
    sync: async (fd) => (await recorder.sync(fd), cut()),
    dataSyncSync: (fd) => (recorder.dataSyncSync(fd), cut()),
    dataSync: async (fd) => (await recorder.dataSync(fd), cut()),
    syncDirectorySync: (path) => (recorder.syncDirectorySync(path), cut()),
    syncDirectory: async (path) => (await recorder.syncDirectory(path), cut()),
  };
}

test("a power cut at any barrier of startAt leaves a log that opens, and the rebuild redone on it starts at the tier's end", async () => {
  const root = tempDir();
  const directory = join(root, 't-0');
  // the old local copy: [0, 10) [10, 20) [20, 30) of producer 5, closed cleanly
  const old = PartitionLog.open(directory);
  for (let i = 0; i < 30; i++) {
    if (i > 0 && i % 10 === 0) old.roll();
    old.append(idempotent(i), 1);
  }
  const producers = old.producerSnapshotAt(TIERED_END);
  const epochs = old.leaderEpochs;
  await old.close();
  const images: string[] = [];
  const log = PartitionLog.open(directory, { disk: diskWithSync(systemDisk, cuttingAtEveryBarrier(root, tempDir('ferry-review-journal-'), images)) });
  const first = images.length;
  log.startAt(TIERED_END, epochs, producers);
  const during = images.slice(first);
  await log.close();
  expect(during.length).toBeGreaterThan(0);
  const failures: string[] = [];
  for (const [at, image] of [...during, ...images.slice(first + during.length)].entries()) {
    try {
      const reopened = PartitionLog.open(join(image, 't-0'));
      reopened.startAt(TIERED_END, epochs, producers); // the rebuild, redone
      expect([reopened.logStartOffset, reopened.logEndOffset]).toEqual([TIERED_END, TIERED_END]);
      // producer 5's last batch (sequence 19) is a duplicate still; sequence 20 continues
      expect(reopened.append(idempotent(19), 2).duplicate).toBe(true);
      expect(reopened.append(idempotent(20), 2).baseOffset).toBe(TIERED_END);
      await reopened.close();
    } catch (error) {
      failures.push(`cut ${at}: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  expect(failures).toEqual([]);
});
