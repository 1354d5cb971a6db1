// Issue 9 "Done when" (a), bounded: a kafkajs idempotent producer rides through kill -9 and
// SIGTERM restarts of one broker: 0 lost, 0 duplicated, every acked record at its acked offset.
// At 61acc49 the same run read back a dozen or more duplicates. The longer form, repeated over
// seeds: `bun test/faults/idempotent-restart-runs.ts --help`.
import { expect, setDefaultTimeout, test } from 'bun:test';
import { describeVerdict } from '../support/ack-ledger.ts';
import { tempDir } from '../support/temp-dir.ts';
import { runIdempotentRestart } from './idempotent-restart-scenario.ts';

setDefaultTimeout(120_000); // broker restarts are slow on a loaded machine; no timing is asserted

test('an idempotent producer through kill -9 and SIGTERM restarts: nothing lost, duplicated or misplaced', async () => {
  const { verdict, faults } = await runIdempotentRestart({ seed: 9, directory: tempDir(), records: 300, restarts: 3 });
  const summary = `${faults.join(', ')}: ${describeVerdict(verdict)}`;
  expect(faults.some((f) => f.startsWith('kill -9')) && faults.some((f) => f.startsWith('SIGTERM'))).toBe(true);
  expect(verdict.acknowledged).toBe(300);
  expect({ lost: verdict.lost.length, duplicated: verdict.duplicated.length, misplaced: verdict.misplaced.length, summary }).toEqual({ lost: 0, duplicated: 0, misplaced: 0, summary });
});
