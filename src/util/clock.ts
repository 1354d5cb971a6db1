/**
 * Time reaches the engine only through a Clock (docs/design.md contract 8), so that tests and the
 * simulation can drive time by hand and replay a run exactly.
 */
export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the Unix epoch (whole ms): for timestamps. */
  nowMs(): number;
  /** A monotonic time in ms with sub-ms resolution: for measuring durations. */
  monotonicMs(): number;
  /** Runs `callback` once after `delayMs`; a `background` timer does not keep the process alive. */
  setTimer(delayMs: number, callback: () => void, background?: boolean): Timer;
  /**
   * Runs `callback` on a later turn of the event loop, after pending I/O (setImmediate): not time,
   * but where concurrent work is let in. Behind the clock so the simulation decides that order too.
   */
  immediate(callback: () => void): Timer;
}

/** Lets the rest of the process run before going on (a long loop's yield). */
export function yieldTurn(clock: Clock): Promise<void> {
  return new Promise((resolve) => void clock.immediate(resolve));
}

/** setTimeout's longest delay (a signed 32-bit count of ms, about 24.8 days); a longer one fires after 1 ms. */
const TIMEOUT_DELAY_MS_MAX = 0x7fff_ffff;

export const systemClock: Clock = {
  nowMs: () => Date.now(),
  monotonicMs: () => performance.now(),
  setTimer(delayMs, callback, background = false) {
    let handle: ReturnType<typeof setTimeout>;
    // a delay past the limit waits in steps of the limit
    const arm = (remainingMs: number): void => {
      const stepMs = Math.min(remainingMs, TIMEOUT_DELAY_MS_MAX);
      handle = setTimeout(stepMs < remainingMs ? () => arm(remainingMs - stepMs) : callback, stepMs);
      if (background) handle.unref();
    };
    arm(delayMs);
    return { cancel: () => clearTimeout(handle) };
  },
  immediate(callback) {
    const handle = setImmediate(callback);
    return { cancel: () => clearImmediate(handle) };
  },
};

/** A clock that moves only when told to; timers fire in deadline order inside `advance`. */
export class ManualClock implements Clock {
  #nowMs: number;
  #timers: { deadlineMs: number; sequence: number; callback: () => void; cancelled: boolean }[] = [];
  #sequence = 0;

  constructor(startMs = 1_700_000_000_000) {
    this.#nowMs = startMs;
  }

  nowMs(): number {
    return this.#nowMs;
  }

  monotonicMs(): number {
    return this.#nowMs;
  }

  setTimer(delayMs: number, callback: () => void): Timer {
    const timer = { deadlineMs: this.#nowMs + Math.max(0, delayMs), sequence: this.#sequence++, callback, cancelled: false };
    this.#timers.push(timer);
    return { cancel: () => void (timer.cancelled = true) };
  }

  immediate(callback: () => void): Timer {
    return this.setTimer(0, callback);
  }

  advance(deltaMs: number): void {
    const targetMs = this.#nowMs + deltaMs;
    for (;;) {
      this.#timers = this.#timers.filter((t) => !t.cancelled);
      this.#timers.sort((a, b) => a.deadlineMs - b.deadlineMs || a.sequence - b.sequence);
      const next = this.#timers[0];
      if (next === undefined || next.deadlineMs > targetMs) break;
      this.#timers.shift();
      this.#nowMs = next.deadlineMs;
      next.callback();
    }
    this.#nowMs = targetMs;
  }
}
