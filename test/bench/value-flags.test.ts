// The benches' value flags and sizes (--history 100MB,1GB).
import { expect, test } from 'bun:test';
import { parseDecimalSize, takeValueFlags } from '../../bench/lib/value-flags.ts';

test('sizes are decimal: MB = 10^6, GB = 10^9', () => {
  expect(parseDecimalSize('100MB')).toBe(100_000_000);
  expect(parseDecimalSize('1GB')).toBe(1_000_000_000);
  expect(parseDecimalSize('1.5gb')).toBe(1_500_000_000);
  expect(parseDecimalSize('4096')).toBe(4096);
  expect(() => parseDecimalSize('10 GiB')).toThrow();
  expect(() => parseDecimalSize('0MB')).toThrow();
});

test('both --name value and --name=value; the rest is left for parseBenchArgs', () => {
  const { values, rest } = takeValueFlags(['--quick', '--kills', '3', '--history=1GB', '--other'], ['kills', 'history']);
  expect(values.get('kills')).toBe('3');
  expect(values.get('history')).toBe('1GB');
  expect(rest).toEqual(['--quick', '--other']);
});

test('a flag without its value is left behind to be refused', () => {
  const { values, rest } = takeValueFlags(['--kills'], ['kills']);
  expect(values.has('kills')).toBe(false);
  expect(rest).toHaveLength(1);
});
