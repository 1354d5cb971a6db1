import { assert } from '../util/assert.ts';
import type { Clock, Timer } from '../util/clock.ts';
import type { SeededRandom } from '../util/random.ts';

/** Where the simulation starts its clock: a fixed instant, so runs replay. */
export const SIM_EPOCH_MS = 1_800_000_000_000;

/** One scheduled callback; it is its own Timer (an event per timer, store answer and packet: no second object to cancel it). */
class SimEvent implements Timer {
  readonly atMs: number;
  /** Order among events due at the same instant: creation order for timers, seeded for I/O completions. */
  readonly tieBreak: number;
  readonly sequence: number;
  readonly callback: () => void;
  cancelled = false;

  constructor(atMs: number, tieBreak: number, sequence: number, callback: () => void) {
    this.atMs = atMs;
    this.tieBreak = tieBreak;
    this.sequence = sequence;
    this.callback = callback;
  }

  cancel(): void {
    this.cancelled = true;
  }
}

/**
 * The simulation's one source of time and of event order (docs/design.md contract 8). Events run one at
 * a time in (time, tie break, sequence) order; after each, every microtask it started runs to
 * completion before the next event, so the same seed replays the same interleaving. Nothing
 * under simulation may reach real timers or real I/O: a stray one would make `drain` wait on it.
 */
export class SimScheduler {
  readonly random: SeededRandom;
  #nowMs = SIM_EPOCH_MS;
  #sequence = 0;
  readonly #heap: SimEvent[] = [];
  #eventsRun = 0;
  /**
   * Where an error thrown by an event goes. In a real process an uncaught exception ends it; here
   * the run records it (a violation: code under test must not throw out of a timer or callback).
   */
  onUncaught: (error: unknown) => void = (error) => {
    throw error;
  };

  /**
   * Runs after each event, once every microtask it queued has run: the harness's recorders look
   * at the state the event left (nothing under simulation calls it, so it changes no run).
   */
  afterEvent: () => void = () => {};

  constructor(random: SeededRandom) {
    this.random = random;
  }

  get nowMs(): number {
    return this.#nowMs;
  }

  get eventsRun(): number {
    return this.#eventsRun;
  }

  get pending(): number {
    return this.#heap.length;
  }

  /** A timer: same-deadline timers fire in the order they were set, as Node and Bun fire them. */
  schedule(delayMs: number, callback: () => void): Timer {
    return this.#push(delayMs, 0, callback);
  }

  /** An I/O completion: same-instant completions resolve in a seeded order. */
  complete(delayMs: number, callback: () => void): Timer {
    return this.#push(delayMs, this.random.next(), callback);
  }

  #push(delayMs: number, tieBreak: number, callback: () => void): Timer {
    assert(Number.isFinite(delayMs), 'a simulated delay is finite');
    const event = new SimEvent(this.#nowMs + Math.max(0, delayMs), tieBreak, this.#sequence++, callback);
    heapPush(this.#heap, event);
    return event;
  }

  /**
   * Runs events until simulated time would pass `untilMs` or `stop()` says so (checked after each
   * event). Returns the number of events run.
   */
  async run(untilMs: number, stop: () => boolean = () => false): Promise<number> {
    let ran = 0;
    for (;;) {
      const next = this.#heap[0];
      if (next === undefined || next.atMs > untilMs) break;
      heapPop(this.#heap);
      if (next.cancelled) continue;
      this.#nowMs = next.atMs;
      try {
        next.callback();
      } catch (error) {
        this.onUncaught(error);
      }
      ran++;
      this.#eventsRun++;
      await drainMicrotasks();
      this.afterEvent();
      if (stop()) return ran;
    }
    if (untilMs > this.#nowMs && Number.isFinite(untilMs)) this.#nowMs = untilMs;
    return ran;
  }
}

/**
 * Every microtask queued so far, and every one those queue, has run when this resolves: a
 * macrotask runs only once the microtask queue is empty. With no real I/O pending, nothing else
 * can run in between, so the order stays the simulation's.
 */
export function drainMicrotasks(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** A simulated process's lifecycle: its callbacks run, wait (SIGSTOP), or never run again (kill -9). */
export type ProcessState = 'running' | 'paused' | 'dead';

/**
 * Where one simulated process's callbacks run. Every timer, store response, disk completion and
 * network delivery of a process passes through its gate: a paused process holds them until
 * resumed (then runs the overdue ones in order), a dead one drops them, so code of a killed
 * broker never runs again however many of its promises were pending.
 *
 * A gate given the scheduler works off a resumed backlog as a process does after SIGCONT: one
 * callback per turn of its event loop, each a scheduler event of its own, so the microtasks it
 * queued run before the next callback (as Bun and Node drain them between macrotasks) and the
 * harness observes the process between them (replica-ends.ts: a log end that one callback moves
 * and a later one discards is seen). What arrives while the backlog lasts queues behind it.
 * Without the scheduler the backlog runs in one go.
 */
export class ProcessGate {
  readonly name: string;
  #state: ProcessState = 'running';
  readonly #held: (() => void)[] = [];
  readonly #scheduler: SimScheduler | null;
  /** A turn that runs the backlog's next callback is scheduled. */
  #draining = false;

  constructor(name: string, scheduler: SimScheduler | null = null) {
    this.name = name;
    this.#scheduler = scheduler;
  }

  get state(): ProcessState {
    return this.#state;
  }

  get alive(): boolean {
    return this.#state !== 'dead';
  }

  deliver(callback: () => void): void {
    if (this.#state === 'running' && this.#held.length === 0) callback();
    else if (this.#state !== 'dead') this.#held.push(callback);
  }

  /** Wraps a promise of work done elsewhere (a store, another process) so it settles through this gate. */
  settle<T>(promise: Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      promise.then(
        (value) => this.deliver(() => resolve(value)),
        (error) => this.deliver(() => reject(error)),
      );
    });
  }

  pause(): void {
    assert(this.#state === 'running', `only a running process pauses (${this.name} is ${this.#state})`);
    this.#state = 'paused';
  }

  resume(): void {
    assert(this.#state === 'paused', `only a paused process resumes (${this.name} is ${this.#state})`);
    this.#state = 'running';
    if (this.#scheduler === null) {
      for (const callback of this.#held.splice(0)) callback();
      return;
    }
    if (!this.#draining) this.#drainNext(this.#scheduler);
  }

  /**
   * Runs the backlog's next callback in a turn of its own, then schedules the one after. One
   * chain at a time: `#draining` stays set while a callback runs, so a callback that pauses and
   * resumes its own process starts no second chain. Paused again or killed, the chain stops (a
   * resume starts it anew).
   */
  #drainNext(scheduler: SimScheduler): void {
    this.#draining = this.#state === 'running' && this.#held.length > 0;
    if (!this.#draining) return;
    scheduler.schedule(0, () => {
      if (this.#state !== 'running') {
        this.#draining = false; // paused again (its resume drains on) or killed (the backlog is gone)
        return;
      }
      const callback = this.#held.shift()!;
      try {
        callback();
      } finally {
        this.#drainNext(scheduler);
      }
    });
  }

  kill(): void {
    this.#state = 'dead';
    this.#held.length = 0;
  }
}

/**
 * The shortest positive timer delay, in simulated ms. Simulated times are epoch-sized (float64
 * resolves about 0.25 µs at SIM_EPOCH_MS), so a shorter delay would not move time at all: code that
 * waits out a remainder on a clock running at another rate (a remainder of 1e-9 ms, from rounding)
 * would set the same timer for ever.
 */
const TIMER_DELAY_MS_MIN = 0.001;

/**
 * One process's view of simulated time: its wall clock may be skewed (nowMs); its monotonic clock
 * is never stepped, but runs at the process's own rate (a crystal a little fast or slow), and so
 * do its timers; its timers fire through its gate.
 */
export class SimClock implements Clock {
  readonly #scheduler: SimScheduler;
  readonly #gate: ProcessGate;
  /** Added to the wall clock only (an NTP-less host drifts; CLOCK_MONOTONIC is not stepped). */
  skewMs = 0;
  /** Monotonic ms per simulated ms; the monotonic time at `#anchorMs` (simulated) is `#anchorMonotonicMs`. */
  #rate = 1;
  #anchorMs: number;
  #anchorMonotonicMs: number;

  constructor(scheduler: SimScheduler, gate: ProcessGate) {
    this.#scheduler = scheduler;
    this.#gate = gate;
    this.#anchorMs = scheduler.nowMs;
    this.#anchorMonotonicMs = scheduler.nowMs - SIM_EPOCH_MS;
  }

  /** How fast the monotonic clock and the timers run against simulated time (1: exactly). */
  get rate(): number {
    return this.#rate;
  }

  /** From now on the monotonic clock runs at `rate` (it goes on from where it is: never a step). */
  set rate(rate: number) {
    assert(rate > 0 && Number.isFinite(rate), `a clock rate is positive (${rate})`);
    this.#anchorMonotonicMs = this.monotonicMs();
    this.#anchorMs = this.#scheduler.nowMs;
    this.#rate = rate;
  }

  nowMs(): number {
    return Math.floor(this.#scheduler.nowMs + this.skewMs);
  }

  monotonicMs(): number {
    return this.#anchorMonotonicMs + (this.#scheduler.nowMs - this.#anchorMs) * this.#rate;
  }

  /** `delayMs` on this process's clock: a timer set before a rate change keeps its simulated deadline. */
  setTimer(delayMs: number, callback: () => void): Timer {
    const simulatedMs = delayMs > 0 ? Math.max(delayMs / this.#rate, TIMER_DELAY_MS_MIN) : 0;
    return this.#gatedTimer(simulatedMs, callback);
  }

  immediate(callback: () => void): Timer {
    return this.#gatedTimer(0, callback);
  }

  /**
   * A timer that came due while its process was paused (or working off a backlog) waits in the
   * gate: a cancel then still stops it, as clearTimeout stops a due timer whose callback has not
   * run yet.
   */
  #gatedTimer(simulatedMs: number, callback: () => void): Timer {
    let cancelled = false;
    const event = this.#scheduler.schedule(simulatedMs, () =>
      this.#gate.deliver(() => {
        if (!cancelled) callback();
      }),
    );
    return {
      cancel: () => {
        cancelled = true;
        event.cancel();
      },
    };
  }
}

function before(a: SimEvent, b: SimEvent): boolean {
  return a.atMs < b.atMs || (a.atMs === b.atMs && (a.tieBreak < b.tieBreak || (a.tieBreak === b.tieBreak && a.sequence < b.sequence)));
}

function heapPush(heap: SimEvent[], event: SimEvent): void {
  heap.push(event);
  let index = heap.length - 1;
  while (index > 0) {
    const parent = (index - 1) >> 1;
    if (!before(heap[index]!, heap[parent]!)) break;
    swap(heap, index, parent);
    index = parent;
  }
}

function heapPop(heap: SimEvent[]): void {
  const last = heap.pop()!;
  if (heap.length === 0) return;
  heap[0] = last;
  let index = 0;
  for (;;) {
    const left = index * 2 + 1;
    const right = left + 1;
    let smallest = index;
    if (left < heap.length && before(heap[left]!, heap[smallest]!)) smallest = left;
    if (right < heap.length && before(heap[right]!, heap[smallest]!)) smallest = right;
    if (smallest === index) return;
    swap(heap, index, smallest);
    index = smallest;
  }
}

/** Swaps two events in place (a destructuring swap allocates an array per step, and the heap moves every event). */
function swap(heap: SimEvent[], a: number, b: number): void {
  const event = heap[a]!;
  heap[a] = heap[b]!;
  heap[b] = event;
}
