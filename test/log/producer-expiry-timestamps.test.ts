// Producer expiry is judged by the log's time (issue 9, finding 20), and the log's time comes from
// batch timestamps a client sets (CreateTime). A producer must not be forgotten while it is still
// producing: forgotten, it is "unknown" and accepted at any sequence (KIP-360), so a retry of a
// batch the log holds is appended a second time. Two ways a client's timestamps did that:
// - one producer's bogus future timestamp moved the log's time ahead and expired every other one;
// - a producer backfilling with event times older than producer.id.expiration.ms was forgotten at
//   each of its own batches once any other batch carried the current time.
import { expect, test } from 'bun:test';
import { buildRecordBatch } from '../../src/format/batch-builder.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { PRODUCER_ID_EXPIRATION_MS } from '../../src/log/producer-state.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { tempDir } from '../support/temp-dir.ts';

const T0 = 1_700_000_000_000;
const DAY_MS = 24 * 60 * 60 * 1000;

function idempotent(id: number, sequence: number, timestampMs: number): Uint8Array {
  return buildRecordBatch([{ value: `${id}-${sequence}`, timestamp: timestampMs }], { nowMs: timestampMs, producerId: id, producerEpoch: 0, baseSequence: sequence });
}

/** Appends, or the error's kind when the log refuses. */
function tryAppend(log: PartitionLog, batch: Uint8Array): { baseOffset: number; duplicate: boolean } | string {
  try {
    const { baseOffset, duplicate } = log.append(batch, 0);
    return { baseOffset, duplicate };
  } catch (error) {
    return (error as { kind?: string }).kind ?? String(error);
  }
}

test("a producer with a timestamp far in the future does not make a retry of another producer's batch land twice", async () => {
  const clock = new ManualClock(T0);
  const log = PartitionLog.open(tempDir(), { clock });
  expect(log.append(idempotent(1, 0, T0), 0).baseOffset).toBe(0);
  // Another client with a clock two days ahead (or a bogus timestamp) writes one batch.
  tryAppend(log, idempotent(2, 0, T0 + 2 * DAY_MS));
  // Producer 1's retry of sequence 0, a second later: the original is in the log at offset 0.
  clock.advance(1000);
  const retry = tryAppend(log, idempotent(1, 0, T0 + 1000));
  expect(retry).toEqual({ baseOffset: 0, duplicate: true });
  expect(log.logEndOffset).toBeLessThanOrEqual(2);
  await log.close();
});

test('a producer backfilling with event times older than the expiration is not forgotten between its own batches', async () => {
  const clock = new ManualClock(T0);
  const log = PartitionLog.open(tempDir(), { clock });
  log.append(idempotent(2, 0, T0), 0); // a producer writing with the current time
  const old = T0 - PRODUCER_ID_EXPIRATION_MS - DAY_MS; // producer 1 replays two-day-old events
  expect(log.append(idempotent(1, 0, old), 0)).toMatchObject({ baseOffset: 1, duplicate: false });
  const retry = tryAppend(log, idempotent(1, 0, old)); // its retry, at once
  expect(retry).toEqual({ baseOffset: 1, duplicate: true });
  expect(log.logEndOffset).toBe(2);
  await log.close();
});
