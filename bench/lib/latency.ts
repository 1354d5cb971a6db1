import * as hdr from 'hdr-histogram-js';

/**
 * Latencies recorded in whole microseconds into an HDR histogram (JS build: ~14 ns per value,
 * no WASM memory to manage), reported in milliseconds.
 */
const MICROSECONDS_PER_MS = 1000;

export class LatencyRecorder {
  readonly #histogram = hdr.build({ useWebAssembly: false, numberOfSignificantValueDigits: 3 });

  /** Records an interval measured with performance.now() (milliseconds, fractional). */
  recordMs(elapsedMs: number): void {
    this.#histogram.recordValue(Math.max(1, Math.round(elapsedMs * MICROSECONDS_PER_MS)));
  }

  get count(): number {
    return this.#histogram.totalCount;
  }

  percentileMs(percentile: number): number {
    return this.#histogram.getValueAtPercentile(percentile) / MICROSECONDS_PER_MS;
  }
}
