import { describe, expect, test } from 'bun:test';
import { endOffsetForEpoch } from '../../src/log/epoch-end-offset.ts';

// A log written by epochs 0 (offsets 0-2), 1 (3-4) and 4 (5-8): log end offset 9.
const ENTRIES = [
  { epoch: 0, startOffset: 0 },
  { epoch: 1, startOffset: 3 },
  { epoch: 4, startOffset: 5 },
];
const LOG = { logStartOffset: 0, logEndOffset: 9 };

describe('endOffsetForEpoch (Kafka LeaderEpochFileCache.endOffsetFor)', () => {
  test('an older epoch ends where the next larger one starts, answered with the largest epoch <= the one asked for', () => {
    expect(endOffsetForEpoch(ENTRIES, 0, LOG)).toEqual({ leaderEpoch: 0, endOffset: 3 });
    expect(endOffsetForEpoch(ENTRIES, 1, LOG)).toEqual({ leaderEpoch: 1, endOffset: 5 });
    expect(endOffsetForEpoch(ENTRIES, 2, LOG)).toEqual({ leaderEpoch: 1, endOffset: 5 });
    expect(endOffsetForEpoch(ENTRIES, 3, LOG)).toEqual({ leaderEpoch: 1, endOffset: 5 });
  });

  test('the latest epoch ends at the log end offset', () => {
    expect(endOffsetForEpoch(ENTRIES, 4, LOG)).toEqual({ leaderEpoch: 4, endOffset: 9 });
  });

  test('-1, an epoch newer than any, and an empty cache have no answer', () => {
    expect(endOffsetForEpoch(ENTRIES, -1, LOG)).toEqual({ leaderEpoch: -1, endOffset: -1 });
    expect(endOffsetForEpoch(ENTRIES, 5, LOG)).toEqual({ leaderEpoch: -1, endOffset: -1 });
    expect(endOffsetForEpoch([], 0, LOG)).toEqual({ leaderEpoch: -1, endOffset: -1 });
  });

  test('an epoch older than the first ends at the first one start (its data is gone)', () => {
    expect(
      endOffsetForEpoch(
        [
          { epoch: 2, startOffset: 10 },
          { epoch: 3, startOffset: 20 },
        ],
        1,
        { logStartOffset: 10, logEndOffset: 30 },
      ),
    ).toEqual({ leaderEpoch: 1, endOffset: 10 });
  });

  test('epochs below the log start offset are seen as retention left them: the last one starts at the log start', () => {
    const log = { logStartOffset: 4, logEndOffset: 9 };
    expect(endOffsetForEpoch(ENTRIES, 0, log)).toEqual({ leaderEpoch: 0, endOffset: 4 });
    expect(endOffsetForEpoch(ENTRIES, 1, log)).toEqual({ leaderEpoch: 1, endOffset: 5 });
    expect(endOffsetForEpoch(ENTRIES, 4, { logStartOffset: 7, logEndOffset: 9 })).toEqual({ leaderEpoch: 4, endOffset: 9 });
    expect(endOffsetForEpoch(ENTRIES, 1, { logStartOffset: 7, logEndOffset: 9 })).toEqual({ leaderEpoch: 1, endOffset: 7 });
  });
});
