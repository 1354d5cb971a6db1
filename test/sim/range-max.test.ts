import { expect, test } from 'bun:test';
import { RangeMax } from '../../src/sim/range-max.ts';
import { SeededRandom } from '../../src/util/random.ts';

test('the maximum of every range matches a scan', () => {
  const random = new SeededRandom(7);
  for (const length of [0, 1, 2, 3, 5, 8, 13, 33]) {
    const values = Array.from({ length }, () => random.nextInt(100));
    const table = new RangeMax(values);
    for (let from = 0; from <= length; from++) {
      for (let to = from; to <= length; to++) expect(table.max(from, to)).toBe(to === from ? -Infinity : Math.max(...values.slice(from, to)));
    }
  }
});
