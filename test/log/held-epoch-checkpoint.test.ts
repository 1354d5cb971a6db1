// LeaderEpochCache.holdWrites ([C5], an adopted log's rebuild): the epochs a rebuild meets change
// the checkpoint in memory only, and it is written once when the rebuild ends, or at a clean close;
// a log reopened from it knows every epoch. An adopted leader's own epoch starts at its log end
// in that same write (PartitionLog.startLeaderEpoch), so its first produce writes none.
import { afterEach, expect, test } from 'bun:test';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { LEADER_EPOCH_CHECKPOINT_FILE } from '../../src/log/leader-epoch-cache.ts';
import { Engine } from '../../src/engine/index.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { type Disk, systemDisk } from '../../src/util/disk.ts';
import { managedBy } from '../support/cluster-policy.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';

const T0 = 1_700_000_000_000;
const EPOCHS = [3, 5, 8];

const open: PartitionLog[] = [];
afterEach(async () => {
  for (const log of open.splice(0)) await log.close();
});

/** The disk, counting the checkpoint's writes (each a temporary file renamed over it). */
function countingCheckpointWrites(): { disk: Disk; writes: () => number } {
  let writes = 0;
  const disk: Disk = new Proxy(systemDisk, {
    get: (target, name) => {
      const value: unknown = Reflect.get(target, name, target);
      if (name !== 'renameSync' || typeof value !== 'function') return typeof value === 'function' ? value.bind(target) : value;
      return (from: string, to: string) => {
        if (to.endsWith(LEADER_EPOCH_CHECKPOINT_FILE)) writes++;
        return (value as Disk['renameSync']).call(target, from, to);
      };
    },
  });
  return { disk, writes: () => writes };
}

/** Starts the log over at 100 with epoch 1 there, then appends one batch in each of EPOCHS, as a rebuild does. */
function rebuildInto(log: PartitionLog): void {
  log.startAt(100, [{ epoch: 1, startOffset: 40 }], null);
  for (const [i, epoch] of EPOCHS.entries()) log.append(buildRecordBatch([{ value: `v${i}`, timestamp: T0 + i }], { nowMs: T0 + i }), epoch);
}

test('held, a rebuild writes no checkpoint until it ends, then one, and a reopened log knows every epoch', async () => {
  const directory = tempDir();
  const { disk, writes } = countingCheckpointWrites();
  const log = PartitionLog.open(directory, { disk });
  open.push(log);
  log.holdEpochCheckpoint();
  rebuildInto(log);
  expect(writes()).toBe(0); // four before: the reset and one per epoch
  log.writeEpochCheckpoint();
  expect(writes()).toBe(1);
  await open.pop()!.close();
  const reopened = PartitionLog.open(directory);
  open.push(reopened);
  expect(reopened.leaderEpochs).toEqual(log.leaderEpochs);
  expect(reopened.leaderEpochs.map((entry) => entry.epoch)).toEqual([1, ...EPOCHS]);
  expect(reopened.logEndOffset).toBe(100 + EPOCHS.length);
});

test('a held checkpoint is written at a clean close', async () => {
  const directory = tempDir();
  const log = PartitionLog.open(directory);
  log.holdEpochCheckpoint();
  rebuildInto(log);
  await log.close();
  const reopened = PartitionLog.open(directory);
  open.push(reopened);
  expect(reopened.leaderEpochs.map((entry) => entry.epoch)).toEqual([1, ...EPOCHS]);
});

test('after writeEpochCheckpoint every change is written again as it happens', async () => {
  const { disk, writes } = countingCheckpointWrites();
  const log = PartitionLog.open(tempDir(), { disk });
  open.push(log);
  log.holdEpochCheckpoint();
  rebuildInto(log);
  log.writeEpochCheckpoint();
  log.append(buildRecordBatch([{ value: 'led', timestamp: T0 + 10 }], { nowMs: T0 + 10 }), 9);
  expect(writes()).toBe(2);
});

test('an adopted leader writes its checkpoint once, its own epoch in it, and its first produce writes none', async () => {
  const { disk, writes } = countingCheckpointWrites();
  const ferry = await Engine.open({ directory: tempDir(), cluster: managedBy(), disk });
  try {
    await ferry.adoptPartition('t', idOf('t'), 0, 1, async (log) => rebuildInto(log), 'leader', 1, 12);
    expect(writes()).toBe(1);
    expect(ferry.endOffsetForLeaderEpoch('t', 0, 12)).toEqual({ leaderEpoch: 12, endOffset: 100 + EPOCHS.length });
    await ferry.produce('t', [{ value: 'first' }], { partition: 0 });
    expect(writes()).toBe(1);
  } finally {
    await ferry.close();
  }
});
