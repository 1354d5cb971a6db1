// `bun test --preload ./test/support/regression-preload.ts` with FERRY_TEST_REGRESSIONS set to a
// comma-separated list of names from src/util/regressions.ts runs any test with those old bugs back
// on: a regression test of issue 9 run so must fail (issue 10 item 6). Tests only, never production.
import { type Regression, reintroduce } from '../../src/util/regressions.ts';

const names = (process.env.FERRY_TEST_REGRESSIONS ?? '')
  .split(',')
  .map((name) => name.trim())
  .filter((name) => name !== '');
reintroduce(names as Regression[]);
