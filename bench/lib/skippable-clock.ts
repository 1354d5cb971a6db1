import { type Clock, systemClock, type Timer } from '../../src/util/clock.ts';

/**
 * A clock for a MemoryStore whose modelled latencies can be switched off for a while: the store
 * waits every request's drawn latency on its clock's timers (MemoryStoreOptions.clock), so while
 * `skipping` is set a timer fires in a microtask instead, and the store behaves like the 'zero'
 * profile; cleared, it is the system clock and the store's own profile applies again.
 *
 * Why: a bench fills a store fast (no 30 ms per 4 MiB PUT) and then reads the same objects back
 * through the s3-express model, with one copy of the data in memory instead of a zero-latency
 * store copied into a second, slow one. Latencies are still drawn while skipping, so the seeded
 * stream moves on as the calls go; that only changes which latencies the reads draw later.
 */
export class SkippableClock implements Clock {
  skipping = false;

  nowMs(): number {
    return systemClock.nowMs();
  }

  monotonicMs(): number {
    return systemClock.monotonicMs();
  }

  setTimer(delayMs: number, callback: () => void, background?: boolean): Timer {
    if (!this.skipping) return systemClock.setTimer(delayMs, callback, background);
    let cancelled = false;
    queueMicrotask(() => {
      if (!cancelled) callback();
    });
    return { cancel: () => void (cancelled = true) };
  }

  immediate(callback: () => void): Timer {
    return systemClock.immediate(callback);
  }
}
