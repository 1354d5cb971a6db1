import { describe, expect, test } from 'bun:test';
import { Engine, type FerryErrorKind, isFerryError } from '../../src/engine/index.ts';
import type { PartitionLog } from '../../src/log/partition-log.ts';
import { batchOf } from '../support/batches.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';
import { managedBy } from '../support/cluster-policy.ts';

function expectKind(action: () => unknown, kind: FerryErrorKind): void {
  let caught: unknown;
  try {
    action();
  } catch (error) {
    caught = error;
  }
  expect(isFerryError(caught, kind)).toBe(true);
}

/** Epochs 0 (offsets 0-2), 1 (3-4) and 4 (5-8), as a rebuild from a chain of three leaders leaves a log. */
async function rebuildThreeEpochs(log: PartitionLog): Promise<void> {
  log.append(batchOf('a', 3), 0);
  log.append(batchOf('b', 2), 1);
  log.append(batchOf('c', 4), 4);
}

async function adopted(leaderEpoch: number, as: 'leader' | 'follower' = 'leader'): Promise<Engine> {
  const ferry = await Engine.open({ directory: tempDir(), cluster: managedBy() });
  await ferry.adoptPartition('t', idOf('t'), 0, 1, rebuildThreeEpochs, as, 1, leaderEpoch);
  return ferry;
}

describe('leader epochs in the engine (KIP-320)', () => {
  test('a partition is served in the epoch it was adopted with; the embedded engine in 0', async () => {
    const ferry = await adopted(6);
    expect(ferry.leaderEpoch('t', 0)).toBe(6);
    expectKind(() => ferry.leaderEpoch('t', 1), 'UnknownTopicOrPartition');
    await ferry.close();
    const embedded = await Engine.open({ directory: tempDir() });
    embedded.createTopic('e');
    expect(embedded.leaderEpoch('e', 0)).toBe(0);
    await embedded.close();
  });

  for (const as of ['leader', 'follower'] as const) {
    test(`a ${as}: -1 and its own epoch pass, an older one is fenced, a newer one unknown`, async () => {
      const ferry = await adopted(3, as);
      ferry.checkLeaderEpoch('t', 0, -1);
      ferry.checkLeaderEpoch('t', 0, 3);
      expectKind(() => ferry.checkLeaderEpoch('t', 0, 2), 'FencedLeaderEpoch');
      expectKind(() => ferry.checkLeaderEpoch('t', 0, 0), 'FencedLeaderEpoch');
      expectKind(() => ferry.checkLeaderEpoch('t', 0, 4), 'UnknownLeaderEpoch');
      await ferry.close();
    });
  }

  test('endOffsetForLeaderEpoch answers from the epoch cache; the current epoch ends at the log end even before it wrote', async () => {
    const ferry = await adopted(6);
    const answers = [-1, 0, 1, 2, 3, 4, 5, 6, 7].map((epoch) => [epoch, ferry.endOffsetForLeaderEpoch('t', 0, epoch)]);
    expect(answers).toEqual([
      [-1, { leaderEpoch: -1, endOffset: -1 }],
      [0, { leaderEpoch: 0, endOffset: 3 }],
      [1, { leaderEpoch: 1, endOffset: 5 }],
      [2, { leaderEpoch: 1, endOffset: 5 }],
      [3, { leaderEpoch: 1, endOffset: 5 }],
      [4, { leaderEpoch: 4, endOffset: 9 }], // epoch 6 starts where 4 ended: at the log end
      [5, { leaderEpoch: 4, endOffset: 9 }],
      [6, { leaderEpoch: 6, endOffset: 9 }],
      [7, { leaderEpoch: -1, endOffset: -1 }],
    ]);
    await ferry.close();
  });

  test('ListOffsets answers carry the epoch: the current one for the latest, else the one that wrote the offset', async () => {
    const ferry = await adopted(6);
    expect(ferry.offsetFor('t', 0, -1)).toEqual({ offset: 9, timestamp: -1, leaderEpoch: 6 });
    expect(ferry.offsetFor('t', 0, -2)).toEqual({ offset: 0, timestamp: -1, leaderEpoch: 0 });
    await ferry.close();
  });
});
