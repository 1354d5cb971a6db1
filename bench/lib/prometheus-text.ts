/**
 * Reads a Prometheus text exposition (GET /metrics) into a map from series (name plus labels,
 * exactly as printed) to value, and diffs two scrapes: counters and summary `_sum`/`_count`
 * subtract, so a bench can report what happened between two points of a server's life.
 */
export type MetricSample = ReadonlyMap<string, number>;

export function parsePrometheusText(text: string): MetricSample {
  const samples = new Map<string, number>();
  for (const line of text.split('\n')) {
    if (line === '' || line.startsWith('#')) continue;
    const space = line.lastIndexOf(' ');
    if (space <= 0) continue;
    samples.set(line.slice(0, space), Number(line.slice(space + 1)));
  }
  return samples;
}

export async function scrapePrometheus(url: string): Promise<MetricSample> {
  const response = await fetch(url);
  if (!response.ok) throw new Error(`GET ${url}: ${response.status}`);
  return parsePrometheusText(await response.text());
}

/** after - before for one series (0 when absent from both). */
export function delta(before: MetricSample, after: MetricSample, series: string): number {
  return (after.get(series) ?? 0) - (before.get(series) ?? 0);
}
