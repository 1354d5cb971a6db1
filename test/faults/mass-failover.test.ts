// Issue 28's black-box run, bounded (the longer form: mass-failover-runs.ts): kill -9 of the broker
// leading most of a 300-partition topic under an idempotent acks=all load.
import { expect, setDefaultTimeout, test } from 'bun:test';
import { describeMassFailover, massFailoverPassed, runMassFailover } from './mass-failover-scenario.ts';

setDefaultTimeout(240_000);

test('kill -9 of the broker leading a 300-partition topic under idempotent acks=all load: every partition moves, nothing lost or duplicated', async () => {
  const result = await runMassFailover({ seed: 1, partitions: 300, replicationFactor: 1, roundsBefore: 5, roundsAfter: 3, leaseMs: 1500 });
  expect(result.moved).toBe(300);
  expect(result.verdict.acknowledged).toBe(300 * (5 + 1 + 1 + 3)); // before, the one under way at the kill, the one after it, after
  if (!massFailoverPassed(result)) throw new Error(describeMassFailover(result));
});
