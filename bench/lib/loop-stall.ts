import { LatencyRecorder } from './latency.ts';

/** The timer asked for on each tick; Bun fires timers no sooner than ~1 ms anyway. */
const TICK_MS = 1;

/**
 * How long the event loop was kept from running a due timer: a 1 ms timer re-armed in a loop,
 * recording how late each one fired. Synchronous work that does not yield (a long apply, a burst
 * of microtasks) shows as a stall; so does a machine whose other processes take the CPU.
 */
export class LoopStallMeter {
  readonly stalls = new LatencyRecorder();
  #running = true;
  readonly #loop: Promise<void>;

  constructor() {
    this.#loop = this.#run();
  }

  /** Stops the ticker; the recorder keeps what it saw. */
  async stop(): Promise<LatencyRecorder> {
    this.#running = false;
    await this.#loop;
    return this.stalls;
  }

  async #run(): Promise<void> {
    while (this.#running) {
      const startMs = performance.now();
      await Bun.sleep(TICK_MS);
      this.stalls.recordMs(Math.max(0, performance.now() - startMs - TICK_MS));
    }
  }
}
