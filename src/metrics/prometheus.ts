/**
 * Pieces of the Prometheus text exposition format 0.0.4: name rules, escaping, sample lines.
 * https://prometheus.io/docs/instrumenting/exposition_formats/
 */

/** Metric names: the format's grammar (colons are legal, though meant for recording rules). */
const METRIC_NAME_PATTERN = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
/** Label names: as metric names without colons; names starting `__` are Prometheus's own. */
const LABEL_NAME_PATTERN = /^[a-zA-Z_][a-zA-Z0-9_]*$/;
const RESERVED_LABEL_PREFIX = '__';

/** A label set in a fixed order (sorted by name), so that equal sets render and compare equal. */
export type LabelPairs = readonly (readonly [name: string, value: string])[];

export function isValidMetricName(name: string): boolean {
  return METRIC_NAME_PATTERN.test(name);
}

export function isValidLabelName(name: string): boolean {
  return LABEL_NAME_PATTERN.test(name) && !name.startsWith(RESERVED_LABEL_PREFIX);
}

/** Label values escape backslash, double quote and line feed; nothing else. */
export function escapeLabelValue(value: string): string {
  return value.replace(/[\\"\n]/g, (character) => (character === '\n' ? '\\n' : `\\${character}`));
}

/** HELP text escapes backslash and line feed (a quote needs no escape there). */
export function escapeHelp(help: string): string {
  return help.replace(/[\\\n]/g, (character) => (character === '\n' ? '\\n' : '\\\\'));
}

/** Go's float spellings for the specials; JavaScript's shortest round-trip form for the rest. */
export function formatSampleValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}

export function formatLabels(labels: LabelPairs): string {
  if (labels.length === 0) return '';
  return `{${labels.map(([name, value]) => `${name}="${escapeLabelValue(value)}"`).join(',')}}`;
}

export function sampleLine(name: string, labels: LabelPairs, value: number): string {
  return `${name}${formatLabels(labels)} ${formatSampleValue(value)}`;
}

export function headerLines(name: string, help: string, type: 'counter' | 'gauge' | 'histogram'): string[] {
  return [`# HELP ${name} ${escapeHelp(help)}`, `# TYPE ${name} ${type}`];
}
