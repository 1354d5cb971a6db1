import { expect, test } from 'bun:test';
import { formatViolation } from '../../src/sim/checker.ts';
import { runSeed } from '../../src/sim/run.ts';

/**
 * A few seeds on every `npm test`; CI runs hundreds more through `npm run sim` (.ci/run), and long
 * runs go through the command (src/sim/README.md).
 */
const SEEDS_IN_TESTS = 10;
const FIRST_SEED = 100_001;

test(`${SEEDS_IN_TESTS} seeds of the simulation find no violation`, async () => {
  const report: string[] = [];
  for (let seed = FIRST_SEED; seed < FIRST_SEED + SEEDS_IN_TESTS; seed++) {
    const result = await runSeed({ seed });
    for (const violation of result.violations) report.push(formatViolation(violation, result.history));
  }
  expect(report).toEqual([]);
}, 300_000);
