// src/metrics/stage-timers.ts: bench-only attribution of the main thread's CPU to produce-path
// stages. Off, it does nothing and exposes nothing; on, a stage entered inside another is taken
// out of the outer one's time (self time), a throw inside a timed stage still closes it, and the
// counts reach /metrics as ferry_stage_* counters that only go up.
import { expect, test } from 'bun:test';
import { MetricsRegistry } from '../../src/metrics/registry.ts';
import { StageTimers } from '../../src/metrics/stage-timers.ts';

/** Burns about `ms` of this thread's CPU. */
function spin(ms: number): void {
  const start = process.threadCpuUsage();
  for (;;) {
    const now = process.threadCpuUsage();
    if (now.user + now.system - start.user - start.system >= ms * 1000) return;
  }
}

function seconds(registry: MetricsRegistry, stage: string): number {
  const line = registry
    .renderPrometheus()
    .split('\n')
    .find((candidate) => candidate.startsWith(`ferry_stage_seconds_total{stage="${stage}"}`));
  return line === undefined ? 0 : Number(line.slice(line.lastIndexOf(' ') + 1));
}

test('off, it times nothing and exposes no series', () => {
  const timers = new StageTimers(false);
  const registry = new MetricsRegistry();
  timers.register(registry);
  expect(timers.time('append', () => 7)).toBe(7);
  timers.copied('frame-assembly', 100);
  expect(registry.renderPrometheus()).not.toContain('ferry_stage');
});

test('a nested stage is taken out of the outer one: each gets its own self time', () => {
  const timers = new StageTimers(true);
  const registry = new MetricsRegistry();
  timers.register(registry);
  timers.time('receive', () => {
    spin(20);
    timers.time('append', () => spin(40));
  });
  const receive = seconds(registry, 'receive');
  const append = seconds(registry, 'append');
  expect(append).toBeGreaterThanOrEqual(0.04);
  expect(receive).toBeGreaterThanOrEqual(0.02);
  expect(receive).toBeLessThan(0.04); // not the 60 ms the nested stage ran inside it
});

test('a throw inside a timed stage closes it: later time is not charged to it', () => {
  const timers = new StageTimers(true);
  const registry = new MetricsRegistry();
  timers.register(registry);
  expect(() =>
    timers.time('validate', () => {
      spin(5);
      throw new Error('corrupt');
    }),
  ).toThrow('corrupt');
  timers.time('encode', () => spin(30));
  expect(seconds(registry, 'validate')).toBeLessThan(0.02);
  expect(seconds(registry, 'encode')).toBeGreaterThanOrEqual(0.03);
});

test('copies are counted by site, and counters only grow from scrape to scrape', () => {
  const timers = new StageTimers(true);
  const registry = new MetricsRegistry();
  timers.register(registry);
  timers.copied('frame-assembly', 1000);
  timers.copied('frame-assembly', 500);
  expect(registry.renderPrometheus()).toContain('ferry_stage_copied_bytes_total{site="frame-assembly"} 1500');
  timers.copied('frame-assembly', 10);
  const text = registry.renderPrometheus();
  expect(text).toContain('ferry_stage_copies_total{site="frame-assembly"} 3');
  expect(text).toContain('ferry_stage_copied_bytes_total{site="frame-assembly"} 1510');
});
