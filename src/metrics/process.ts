/**
 * The process's own health: CPU time, resident memory, and how late the event loop runs timers
 * (a loop blocked by a long synchronous step delays every request and every upload behind it).
 * CPU and memory are read at each scrape; the loop delay is sampled by a timer that measures how
 * late it fires, on the injected clock.
 */
import type { Clock, Timer } from '../util/clock.ts';
import type { MetricsRegistry } from './registry.ts';

/** One probe every 100 ms: 10 timer callbacks a second, and a stall of 100 ms or more is seen at once. */
export const EVENT_LOOP_PROBE_INTERVAL_MS = 100;
/** Event-loop delays from 1 ms (a busy loop) to 10 s (a stall that fails leases). */
export const EVENT_LOOP_DELAY_SECONDS_BUCKETS: readonly number[] = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 10];

const MICROSECONDS_PER_SECOND = 1_000_000;
const MS_PER_SECOND = 1000;

/** What the process reports of itself; node's `process` by default, a fake in tests. */
export interface ProcessReadings {
  cpuUsage(): { readonly user: number; readonly system: number };
  residentMemoryBytes(): number;
  heapUsedBytes(): number;
}

export const systemProcessReadings: ProcessReadings = {
  cpuUsage: () => process.cpuUsage(),
  residentMemoryBytes: () => process.memoryUsage.rss(),
  heapUsedBytes: () => process.memoryUsage().heapUsed,
};

/**
 * Registers ferry_process_cpu_seconds_total, ferry_process_resident_memory_bytes,
 * ferry_process_heap_used_bytes and ferry_process_event_loop_delay_seconds, and starts the loop
 * probe (a background timer: it never keeps the process alive). Returns what stops both.
 */
export function registerProcessMetrics(registry: MetricsRegistry, clock: Clock, readings: ProcessReadings = systemProcessReadings): () => void {
  const cpu = registry.counter('ferry_process_cpu_seconds_total', 'CPU time of the process, user and system');
  const resident = registry.gauge('ferry_process_resident_memory_bytes', 'Resident set size of the process');
  const heap = registry.gauge('ferry_process_heap_used_bytes', 'JavaScript heap in use');
  const delay = registry.histogram('ferry_process_event_loop_delay_seconds', `How late a timer due every ${EVENT_LOOP_PROBE_INTERVAL_MS} ms fired`, { buckets: EVENT_LOOP_DELAY_SECONDS_BUCKETS });
  let cpuSeconds = 0;
  const stopCollect = registry.onCollect(() => {
    const usage = readings.cpuUsage();
    const nowSeconds = (usage.user + usage.system) / MICROSECONDS_PER_SECOND;
    if (nowSeconds > cpuSeconds) cpu.add(nowSeconds - cpuSeconds);
    cpuSeconds = Math.max(cpuSeconds, nowSeconds);
    resident.set(readings.residentMemoryBytes());
    heap.set(readings.heapUsedBytes());
  });
  let timer: Timer | null = null;
  const probe = (): void => {
    const dueMs = clock.monotonicMs() + EVENT_LOOP_PROBE_INTERVAL_MS;
    timer = clock.setTimer(
      EVENT_LOOP_PROBE_INTERVAL_MS,
      () => {
        delay.observe(Math.max(0, clock.monotonicMs() - dueMs) / MS_PER_SECOND);
        probe();
      },
      true,
    );
  };
  probe();
  return () => {
    stopCollect();
    timer?.cancel();
  };
}
