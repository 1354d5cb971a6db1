// Black-box run (d), bounded: see min-insync-scenario.ts; the longer form is test/faults/min-insync-runs.ts.
import { expect, setDefaultTimeout, test } from 'bun:test';
import { describeVerdict } from '../support/ack-ledger.ts';
import { runMinInsync } from './min-insync-scenario.ts';

setDefaultTimeout(180_000);

test('RF 3, min.insync.replicas 2: after kill -9 of one broker acks=all resumes on every partition within the lease, nothing acknowledged lost', async () => {
  const result = await runMinInsync({ seed: 9, leaseMs: 1500, scanIntervalMs: 100, recordsBefore: 5, recordsAfter: 3, log: (line) => console.log(line) });
  const stalled = result.resumedAfterMs.flatMap((ms, partition) => (ms === null ? [partition] : []));
  if (stalled.length > 0) console.log(result.output);
  expect({ stalled, bound: result.boundMs }).toEqual({ stalled: [], bound: result.boundMs });
  const { verdict } = result;
  expect(describeVerdict(verdict)).toBe(describeVerdict({ ...verdict, lost: [], duplicated: [], misplaced: [] }));
  expect(verdict.acknowledged).toBeGreaterThanOrEqual(3 * (5 + 1));
});
