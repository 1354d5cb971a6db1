/** Small statistics over a handful of rounds: medians and ranges, never a single run. */

export function median(values: readonly number[]): number {
  if (values.length === 0) throw new Error('median of no values');
  const sorted = [...values].sort((a, b) => a - b);
  const middle = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[middle]! : (sorted[middle - 1]! + sorted[middle]!) / 2;
}

export function minOf(values: readonly number[]): number {
  return values.reduce((min, value) => Math.min(min, value), Infinity);
}

export function maxOf(values: readonly number[]): number {
  return values.reduce((max, value) => Math.max(max, value), -Infinity);
}

/** Element-wise a[i] / b[i]: ratios of rounds measured side by side. */
export function pairedRatios(numerators: readonly number[], denominators: readonly number[]): number[] {
  if (numerators.length !== denominators.length) throw new Error('paired ratios need equal round counts');
  return numerators.map((value, index) => value / denominators[index]!);
}
