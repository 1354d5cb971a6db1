import { describe, expect, test } from 'bun:test';
import { isFerryError } from '../../src/errors.ts';
import { escapeLabelValue, LATENCY_SECONDS_BUCKETS, MetricsRegistry, SERIES_PER_FAMILY_MAX, SIZE_BYTES_BUCKETS } from '../../src/metrics/index.ts';

const HELP = 'help';

function expectInvalid(action: () => unknown): void {
  let caught: unknown;
  try {
    action();
  } catch (error) {
    caught = error;
  }
  expect(isFerryError(caught, 'InvalidArgument')).toBe(true);
}

describe('registration', () => {
  test('the same name and labels return the same metric, whatever the label order', () => {
    const registry = new MetricsRegistry();
    const a = registry.gauge('ferry_lag', HELP, { labels: { topic: 't', partition: '0' } });
    expect(registry.gauge('ferry_lag', HELP, { labels: { partition: '0', topic: 't' } })).toBe(a);
    expect(registry.gauge('ferry_lag', HELP, { labels: { partition: '1', topic: 't' } })).not.toBe(a);
    expect(registry.counter('ferry_puts', HELP)).toBe(registry.counter('ferry_puts', HELP));
    expect(registry.histogram('ferry_upload_seconds', HELP)).toBe(registry.histogram('ferry_upload_seconds', HELP));
  });

  test('a counter is one family with or without _total', () => {
    const registry = new MetricsRegistry();
    expect(registry.counter('ferry_puts_total', HELP)).toBe(registry.counter('ferry_puts', HELP));
  });

  test('a name registered as another type throws', () => {
    const registry = new MetricsRegistry();
    registry.counter('ferry_a', HELP);
    expectInvalid(() => registry.gauge('ferry_a', HELP));
    expectInvalid(() => registry.histogram('ferry_a', HELP));
    registry.histogram('ferry_b', HELP);
    expectInvalid(() => registry.counter('ferry_b', HELP));
  });

  test('names that would collide in the output throw', () => {
    const registry = new MetricsRegistry();
    registry.counter('ferry_puts', HELP);
    expectInvalid(() => registry.gauge('ferry_puts_total', HELP));
    registry.histogram('ferry_upload_seconds', HELP);
    expectInvalid(() => registry.gauge('ferry_upload_seconds_sum', HELP));
    expectInvalid(() => registry.counter('ferry_upload_seconds_count', HELP));
    expectInvalid(() => registry.gauge('ferry_upload_seconds_bucket', HELP));
    registry.gauge('ferry_depth_count', HELP);
    expectInvalid(() => registry.histogram('ferry_depth', HELP));
  });

  test('other help text or other histogram buckets for the same name throws', () => {
    const registry = new MetricsRegistry();
    registry.gauge('ferry_a', HELP);
    expectInvalid(() => registry.gauge('ferry_a', 'other help'));
    registry.histogram('ferry_size_bytes', HELP, { buckets: SIZE_BYTES_BUCKETS });
    expectInvalid(() => registry.histogram('ferry_size_bytes', HELP, { buckets: LATENCY_SECONDS_BUCKETS }));
    expect(() => registry.histogram('ferry_size_bytes', HELP, { buckets: [...SIZE_BYTES_BUCKETS] })).not.toThrow();
  });

  test('histograms bucket latencies in seconds unless given buckets', () => {
    const registry = new MetricsRegistry();
    expect(registry.histogram('ferry_upload_seconds', HELP).bounds).toBe(LATENCY_SECONDS_BUCKETS);
    expect(registry.histogram('ferry_object_bytes', HELP, { buckets: SIZE_BYTES_BUCKETS }).bounds).toBe(SIZE_BYTES_BUCKETS);
  });

  test('past SERIES_PER_FAMILY_MAX label sets, new series work but are counted instead of exposed', () => {
    const registry = new MetricsRegistry();
    for (let index = 0; index < SERIES_PER_FAMILY_MAX + 3; index++) registry.gauge('ferry_g', HELP, { labels: { topic: `t${index}` } }).set(1);
    const text = registry.renderPrometheus();
    expect(text.split('\n').filter((line) => line.startsWith('ferry_g{')).length).toBe(SERIES_PER_FAMILY_MAX);
    expect(text).toContain('ferry_metrics_series_dropped_total 3');
  });

  test('collectors run before each render, until removed', () => {
    const registry = new MetricsRegistry();
    const gauge = registry.gauge('ferry_g', HELP);
    let reads = 0;
    const stop = registry.onCollect(() => gauge.set(++reads));
    expect(registry.renderPrometheus()).toContain('ferry_g 1');
    expect(registry.renderPrometheus()).toContain('ferry_g 2');
    stop();
    expect(registry.renderPrometheus()).toContain('ferry_g 2');
  });

  test('invalid metric names are rejected', () => {
    const registry = new MetricsRegistry();
    for (const name of ['', '1ferry', 'ferry-lag', 'ferry lag', 'ferry_lät', 'ferry.lag']) expectInvalid(() => registry.gauge(name, HELP));
    expectInvalid(() => registry.counter('_total', HELP)); // nothing left once the suffix goes
    for (const name of ['ferry:lag', '_ferry', 'Ferry_Lag9', ':x']) expect(() => registry.gauge(name, HELP)).not.toThrow();
  });

  test('invalid and reserved label names are rejected', () => {
    const registry = new MetricsRegistry();
    for (const label of ['__name', '1a', 'a:b', 'a-b', '']) {
      expectInvalid(() => registry.gauge('ferry_g', HELP, { labels: { [label]: 'v' } }));
    }
    expectInvalid(() => registry.histogram('ferry_h', HELP, { labels: { le: '0.5' } }));
    expect(() => registry.gauge('ferry_g', HELP, { labels: { le: '0.5', _x: 'v' } })).not.toThrow();
  });
});

describe('renderPrometheus', () => {
  test('an empty registry renders nothing', () => {
    expect(new MetricsRegistry().renderPrometheus()).toBe('');
  });

  test('a small registry renders exactly (golden)', () => {
    const registry = new MetricsRegistry();
    registry.counter('ferry_wal_objects', 'WAL objects made durable.').add(3);
    const lagLabels = (partition: string) => ({ labels: { topic: 'orders', partition } });
    registry.gauge('ferry_follower_lag_offsets', 'Offsets a follower is behind.', lagLabels('0')).set(42);
    registry.gauge('ferry_follower_lag_offsets', 'Offsets a follower is behind.', lagLabels('1')).set(0);
    const upload = registry.histogram('ferry_wal_upload_latency_seconds', 'Time to PUT one WAL object.', {
      labels: { store: 's3-express' },
      buckets: [0.001, 0.01, 0.1],
    });
    for (const seconds of [0.0005, 0.001, 0.002, 0.5]) upload.observe(seconds);
    registry.histogram('ferry_wal_upload_latency_seconds', 'Time to PUT one WAL object.', { labels: { store: 'memory' }, buckets: [0.001, 0.01, 0.1] });
    expect(registry.renderPrometheus()).toBe(
      [
        '# HELP ferry_wal_objects_total WAL objects made durable.',
        '# TYPE ferry_wal_objects_total counter',
        'ferry_wal_objects_total 3',
        '# HELP ferry_follower_lag_offsets Offsets a follower is behind.',
        '# TYPE ferry_follower_lag_offsets gauge',
        'ferry_follower_lag_offsets{partition="0",topic="orders"} 42',
        'ferry_follower_lag_offsets{partition="1",topic="orders"} 0',
        '# HELP ferry_wal_upload_latency_seconds Time to PUT one WAL object.',
        '# TYPE ferry_wal_upload_latency_seconds histogram',
        'ferry_wal_upload_latency_seconds_bucket{store="s3-express",le="0.001"} 2',
        'ferry_wal_upload_latency_seconds_bucket{store="s3-express",le="0.01"} 3',
        'ferry_wal_upload_latency_seconds_bucket{store="s3-express",le="0.1"} 3',
        'ferry_wal_upload_latency_seconds_bucket{store="s3-express",le="+Inf"} 4',
        'ferry_wal_upload_latency_seconds_sum{store="s3-express"} 0.5035',
        'ferry_wal_upload_latency_seconds_count{store="s3-express"} 4',
        'ferry_wal_upload_latency_seconds_bucket{store="memory",le="0.001"} 0',
        'ferry_wal_upload_latency_seconds_bucket{store="memory",le="0.01"} 0',
        'ferry_wal_upload_latency_seconds_bucket{store="memory",le="0.1"} 0',
        'ferry_wal_upload_latency_seconds_bucket{store="memory",le="+Inf"} 0',
        'ferry_wal_upload_latency_seconds_sum{store="memory"} 0',
        'ferry_wal_upload_latency_seconds_count{store="memory"} 0',
        '',
      ].join('\n'),
    );
  });

  test('label values escape backslash, double quote and line feed; HELP escapes backslash and line feed', () => {
    const registry = new MetricsRegistry();
    registry.gauge('ferry_g', 'a "quoted" \\ help\nline', { labels: { path: 'C:\\wal\n"x"' } }).set(1);
    expect(registry.renderPrometheus()).toBe(['# HELP ferry_g a "quoted" \\\\ help\\nline', '# TYPE ferry_g gauge', 'ferry_g{path="C:\\\\wal\\n\\"x\\""} 1', ''].join('\n'));
  });

  test('escaping touches only backslash, double quote and line feed', () => {
    expect(escapeLabelValue("tab\there, ünïcode, 'single', \r")).toBe("tab\there, ünïcode, 'single', \r");
    expect(escapeLabelValue('\\"\n')).toBe('\\\\\\"\\n');
  });

  test('special values use the format spellings', () => {
    const registry = new MetricsRegistry();
    registry.gauge('ferry_g', HELP, { labels: { v: 'up' } }).set(Number.POSITIVE_INFINITY);
    registry.gauge('ferry_g', HELP, { labels: { v: 'down' } }).set(Number.NEGATIVE_INFINITY);
    registry.gauge('ferry_g', HELP, { labels: { v: 'small' } }).set(1.5e-7);
    const samples = registry
      .renderPrometheus()
      .split('\n')
      .filter((line) => line.startsWith('ferry_g{'));
    expect(samples).toEqual(['ferry_g{v="up"} +Inf', 'ferry_g{v="down"} -Inf', 'ferry_g{v="small"} 1.5e-7']);
  });

  test('every sample line follows the text format grammar', () => {
    const registry = new MetricsRegistry();
    registry.counter('ferry_c', HELP, { labels: { a: 'x y' } }).add(1);
    registry.histogram('ferry_h', HELP, { labels: { b: '"' } }).observe(3);
    const sample = /^[a-zA-Z_:][a-zA-Z0-9_:]*(\{([a-zA-Z_][a-zA-Z0-9_]*="([^"\\\n]|\\[\\"n])*",?)*\})? (NaN|[+-]Inf|-?[0-9.e+-]+)$/;
    for (const line of registry.renderPrometheus().trimEnd().split('\n')) {
      if (!line.startsWith('#')) expect(line).toMatch(sample);
    }
  });
});
