// Kafka's DeleteRecords on a single engine: the log start moves up to the offset asked (-1: the
// high watermark), never down and never past the high watermark; reads below it are
// OFFSET_OUT_OF_RANGE, ListOffsets EARLIEST answers it, the segments wholly below it go, and all
// of it holds across a restart (the log's log-start-offset checkpoint).
import { expect, test } from 'bun:test';
import { Engine, type FerryErrorKind, isFerryError } from '../../src/engine/index.ts';
import { tempDir } from '../support/temp-dir.ts';
import { idOf } from '../support/topic-ids.ts';
import { managedBy } from '../support/cluster-policy.ts';

/** A few batches per segment: ten produces roll several. */
const SMALL_SEGMENT_BYTES = 1024;
const EARLIEST = -2;
const LATEST = -1;

async function engineWithRecords(directory = tempDir(), count = 10): Promise<Engine> {
  const ferry = await Engine.open({ directory, log: { segmentBytes: SMALL_SEGMENT_BYTES } });
  ferry.createTopic('t');
  for (let i = 0; i < count; i++) await ferry.produce('t', [{ value: `value-${i}`.padEnd(250, '.') }], { partition: 0 });
  return ferry;
}

function failure(action: () => unknown): { kind: FerryErrorKind | null; message: string } {
  try {
    action();
  } catch (error) {
    return { kind: isFerryError(error) ? error.kind : null, message: error instanceof Error ? error.message : String(error) };
  }
  throw new Error('expected a failure');
}

test('the log start moves to the offset: reads below are out of range, EARLIEST answers it, segments wholly below go', async () => {
  const ferry = await engineWithRecords();
  const segmentsBefore = ferry.localLogStartOffset('t', 0);
  expect(segmentsBefore).toBe(0);
  expect(ferry.deleteRecords('t', 0, 7)).toBe(7);
  expect(ferry.offsetFor('t', 0, EARLIEST).offset).toBe(7);
  expect((await ferry.offsetForWithTier('t', 0, EARLIEST)).offset).toBe(7);
  expect(failure(() => ferry.fetch('t', 0, 6)).kind).toBe('OffsetOutOfRange');
  expect(failure(() => ferry.fetch('t', 0, 0, { maxBytes: 0 })).kind).toBe('OffsetOutOfRange');
  await expect(ferry.fetchWithTier('t', 0, 3)).rejects.toThrow(/before the log start 7/);
  const read = ferry.fetch('t', 0, 7);
  expect(read.logStartOffset).toBe(7);
  expect(read.batches[0]!.baseOffset).toBe(7);
  expect(ferry.localLogStartOffset('t', 0)).toBeGreaterThan(0); // whole segments below 7 were deleted
  expect(ferry.localLogStartOffset('t', 0)).toBeLessThanOrEqual(7);
  const consumed: number[] = [];
  const abort = new AbortController();
  for await (const record of ferry.consume('t', { signal: abort.signal })) {
    consumed.push(record.offset);
    if (record.offset === 9) abort.abort();
  }
  expect(consumed).toEqual([7, 8, 9]); // from the log start: nothing deleted comes back
  await ferry.close();
});

test("-1 deletes up to the high watermark; an offset above it or below -1 is out of range, with Kafka's messages", async () => {
  const ferry = await engineWithRecords();
  expect(failure(() => ferry.deleteRecords('t', 0, 11))).toEqual({
    kind: 'OffsetOutOfRange',
    message: 'Cannot increment the log start offset to 11 of partition t-0 since it is larger than the high watermark 10',
  });
  expect(failure(() => ferry.deleteRecords('t', 0, -2))).toEqual({ kind: 'OffsetOutOfRange', message: 'The offset -2 for partition t-0 is not valid' });
  expect(ferry.offsetFor('t', 0, EARLIEST).offset).toBe(0);
  expect(ferry.deleteRecords('t', 0, -1)).toBe(10);
  expect(ferry.offsetFor('t', 0, EARLIEST).offset).toBe(10);
  expect(ferry.offsetFor('t', 0, LATEST).offset).toBe(10);
  expect(ferry.fetch('t', 0, 10).batches).toEqual([]);
  expect(failure(() => ferry.deleteRecords('t', 1, 0)).kind).toBe('UnknownTopicOrPartition');
  await ferry.close();
});

test('the log start never moves down: a lower offset answers the current start', async () => {
  const ferry = await engineWithRecords();
  expect(ferry.deleteRecords('t', 0, 5)).toBe(5);
  expect(ferry.deleteRecords('t', 0, 2)).toBe(5);
  expect(ferry.offsetFor('t', 0, EARLIEST).offset).toBe(5);
  await ferry.close();
});

test('the new log start holds across a restart, and appends go on after it', async () => {
  const directory = tempDir();
  const ferry = await engineWithRecords(directory);
  ferry.deleteRecords('t', 0, 8); // inside a segment: the segment stays, its records below 8 are gone all the same
  await ferry.close();
  const again = await Engine.open({ directory, log: { segmentBytes: SMALL_SEGMENT_BYTES } });
  expect(again.offsetFor('t', 0, EARLIEST).offset).toBe(8);
  expect(failure(() => again.fetch('t', 0, 7)).kind).toBe('OffsetOutOfRange');
  expect(again.fetch('t', 0, 8).logStartOffset).toBe(8);
  expect(await again.produce('t', [{ value: 'after' }], { partition: 0 })).toEqual([{ partition: 0, offset: 10 }]);
  await again.close();
});

test('a timestamp lookup never answers an offset below the log start', async () => {
  const ferry = await engineWithRecords();
  ferry.deleteRecords('t', 0, 8);
  expect(ferry.offsetFor('t', 0, 0).offset).toBe(8); // every record's timestamp is after 0
  await ferry.close();
});

test('only a leader deletes records: a followed partition answers NotLeader', async () => {
  const ferry = await Engine.open({ directory: tempDir(), cluster: managedBy() });
  await ferry.adoptPartition('t', idOf('t'), 0, 1, async () => {}, 'follower');
  expect(failure(() => ferry.deleteRecords('t', 0, 0)).kind).toBe('NotLeader');
  await ferry.close();
});
