// Black-box run (b) of issue 9, bounded and seeded (the longer form: cluster-failover-runs.ts).
import { expect, setDefaultTimeout, test } from 'bun:test';
import { describeResult, passed, runClusterFailover } from './cluster-failover-scenario.ts';

setDefaultTimeout(180_000);

test('three cluster brokers: kill -9 and restart of a leader, SIGSTOP of a leader past its lease: nothing lost, duplicated or misplaced', async () => {
  const result = await runClusterFailover({ seed: 1, recordsPerPhase: 30, leaseMs: 1500 });
  expect(result.verdict.acknowledged).toBeGreaterThan(0);
  expect(result.takenOver).toBe(true); // the pause outlasted the lease: the scenario exercised a takeover
  if (!passed(result)) throw new Error(describeResult(result));
});
