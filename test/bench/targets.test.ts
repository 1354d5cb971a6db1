// bench/lib/targets.ts judges a goal from a measurement: at-least and at-most goals, and a score
// that reaches 1 exactly when the goal is met (the report's plot draws its line at 1).
import { expect, test } from 'bun:test';
import { atLeast, atMost } from '../../bench/lib/targets.ts';

test('an at-least goal is met at or above it, with measured/goal as the score', () => {
  const missed = atLeast('broker', 'vs mock', 0.62, 0.8, 'x');
  expect(missed).toMatchObject({ met: false, goal: '>= 0.8x', measured: '0.62x' });
  expect(missed.score).toBeCloseTo(0.775);
  expect(atLeast('broker', 'vs mock', 0.8, 0.8, 'x').met).toBe(true);
});

test('an at-most goal is met at or below it, with goal/measured as the score', () => {
  const met = atMost('broker', 'p99', 18, 20, ' ms');
  expect(met).toMatchObject({ met: true, goal: '<= 20 ms', measured: '18 ms' });
  expect(met.score).toBeGreaterThan(1);
  const missed = atMost('broker', 'p99', 40, 20, ' ms');
  expect(missed.met).toBe(false);
  expect(missed.score).toBeCloseTo(0.5);
});
