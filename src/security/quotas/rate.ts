// Kafka's Rate over a SampledTotal (clients/.../metrics/stats/Rate.java, SampledStat.java), the
// measure every client quota is checked against, reproduced to the millisecond so that throttle
// times come out as Kafka's.
import { assert } from '../../util/assert.ts';

/** quota.window.num and quota.window.size.seconds (in ms). */
export interface RateWindows {
  /** Samples kept (Kafka's default 11: 10 whole windows and the current one). */
  readonly samples: number;
  readonly windowMs: number;
}

/**
 * The sum of values recorded over the last `samples` windows, per second. Samples are a ring:
 * recording into a window that has ended starts the next sample at the start of the window the
 * time falls in (on the grid of the previous window's end), reusing the oldest sample; a sample
 * older than `samples` windows counts nothing. The rate divides by the time since the oldest
 * sample began, but never by less than `samples - 1` whole windows (so that a first burst does
 * not read as an enormous rate).
 */
export class SampledRate {
  readonly #windows: RateWindows;
  /** Each sample's start and total; `#current` is the one being recorded into. */
  readonly #starts: number[] = [];
  readonly #totals: number[] = [];
  #current = 0;

  constructor(windows: RateWindows) {
    assert(Number.isInteger(windows.samples) && windows.samples >= 2, 'a rate keeps at least two samples');
    assert(windows.windowMs > 0, 'a rate window is longer than 0 ms');
    this.#windows = windows;
  }

  /** SampledStat.record: adds `value` at `nowMs` (a negative value takes back what was recorded). */
  record(value: number, nowMs: number): void {
    const { samples, windowMs } = this.#windows;
    if (this.#starts.length === 0) this.#push(nowMs);
    if (nowMs - this.#starts[this.#current]! >= windowMs) {
      const previousEndMs = this.#starts[this.#current]! + windowMs;
      const startMs = nowMs - ((nowMs - previousEndMs) % windowMs);
      this.#current = (this.#current + 1) % samples;
      if (this.#current >= this.#starts.length) this.#push(startMs);
      else this.#reset(this.#current, startMs);
    }
    this.#totals[this.#current]! += value;
  }

  /** Rate.measure: the total over the samples per second of windowMs(nowMs). */
  measure(nowMs: number): number {
    this.#purge(nowMs);
    let total = 0;
    for (const sampleTotal of this.#totals) total += sampleTotal;
    return total / (this.windowMs(nowMs) / 1000);
  }

  /** Rate.windowSize: the time the rate divides by, in ms. */
  windowMs(nowMs: number): number {
    const { samples, windowMs } = this.#windows;
    this.#purge(nowMs);
    if (this.#starts.length === 0) this.#push(nowMs);
    let elapsedMs = nowMs - Math.min(...this.#starts);
    const fullWindows = Math.floor(elapsedMs / windowMs);
    if (fullWindows < samples - 1) elapsedMs += (samples - 1 - fullWindows) * windowMs;
    return elapsedMs;
  }

  /** SampledStat.purgeObsoleteSamples: a sample that began `samples` windows ago or more starts afresh now. */
  #purge(nowMs: number): void {
    const expireAgeMs = this.#windows.samples * this.#windows.windowMs;
    for (let index = 0; index < this.#starts.length; index++) if (nowMs - this.#starts[index]! >= expireAgeMs) this.#reset(index, nowMs);
  }

  #push(startMs: number): void {
    this.#starts.push(startMs);
    this.#totals.push(0);
  }

  #reset(index: number, startMs: number): void {
    this.#starts[index] = startMs;
    this.#totals[index] = 0;
  }
}
