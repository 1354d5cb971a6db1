import type { Engine } from '../../src/engine/index.ts';
import { LatencyRecorder } from './latency.ts';

interface Expected {
  readonly lastOffset: number;
  readonly dueMs: number;
}

/**
 * Times when offsets become visible on a follower engine: readable by its consumers, i.e. below
 * the partition's high watermark (what `fetch` returns and `consume` waits for).
 *
 * Event-driven, not polled: per partition, one `consume` from the oldest offset still awaited.
 * `consume` parks on the partition's data waiter, which the follower resolves synchronously when
 * it applies a frame or learns the leader's high watermark, so the wake-up lands in the
 * microtasks right after the apply: no timer quantisation (Bun's timers fire after >= ~1 ms, so
 * polling cannot resolve sub-ms) and no work while nothing moves. On a wake-up one `fetch` of a
 * single batch reads the high watermark, and every awaited offset below it is recorded at once.
 * Cost per wake-up: one generator, one parsed record, two single-batch reads of the local log.
 */
export class VisibilityWatcher {
  /** This watcher's samples; every sample also goes into the recorders given to the constructor. */
  readonly latency = new LatencyRecorder();
  readonly #also: readonly LatencyRecorder[];
  readonly #ferry: Engine;
  readonly #topic: string;
  readonly #queues: Expected[][];
  readonly #heads: number[];
  readonly #wakers: ((() => void) | null)[];
  readonly #controller = new AbortController();
  readonly #loops: Promise<void>[];
  #wakeUps = 0;
  #failure: unknown = null;

  constructor(ferry: Engine, topic: string, partitions: number, also: readonly LatencyRecorder[] = []) {
    this.#also = also;
    this.#ferry = ferry;
    this.#topic = topic;
    this.#queues = Array.from({ length: partitions }, () => []);
    this.#heads = new Array<number>(partitions).fill(0);
    this.#wakers = new Array<(() => void) | null>(partitions).fill(null);
    this.#loops = this.#queues.map((_, partition) =>
      this.#watch(partition).catch((error: unknown) => {
        this.#failure ??= error;
      }),
    );
  }

  /** Offsets up to `lastOffset` of `partition` were due at `dueMs` (performance.now()). */
  expect(partition: number, lastOffset: number, dueMs: number): void {
    const queue = this.#queues[partition]!;
    queue.push({ lastOffset, dueMs });
    // Produce calls of one partition resolve in call order; keep the queue sorted if one did not.
    if (queue.length - 1 > this.#heads[partition]! && queue.at(-2)!.lastOffset > lastOffset) {
      const head = this.#heads[partition]!;
      const rest = queue.splice(head).sort((a, b) => a.lastOffset - b.lastOffset);
      queue.push(...rest);
    }
    const wake = this.#wakers[partition];
    this.#wakers[partition] = null;
    wake?.();
  }

  /** Offsets expected and not visible yet. */
  get pending(): number {
    return this.#queues.reduce((sum, queue, partition) => sum + queue.length - this.#heads[partition]!, 0);
  }

  get wakeUps(): number {
    return this.#wakeUps;
  }

  get failure(): unknown {
    return this.#failure;
  }

  /** Resolves true once nothing is pending, false after `timeoutMs`. */
  async drained(timeoutMs: number): Promise<boolean> {
    const deadlineMs = performance.now() + timeoutMs;
    while (this.pending > 0 && this.#failure === null) {
      if (performance.now() > deadlineMs) return false;
      await Bun.sleep(1);
    }
    return this.pending === 0;
  }

  async stop(): Promise<void> {
    this.#controller.abort();
    for (let partition = 0; partition < this.#wakers.length; partition++) {
      const wake = this.#wakers[partition];
      this.#wakers[partition] = null;
      wake?.();
    }
    await Promise.all(this.#loops);
  }

  async #watch(partition: number): Promise<void> {
    const signal = this.#controller.signal;
    const queue = this.#queues[partition]!;
    while (!signal.aborted) {
      const head = queue[this.#heads[partition]!];
      if (head === undefined) {
        await new Promise<void>((resolve) => (this.#wakers[partition] = resolve));
        continue;
      }
      const records = this.#ferry.consume(this.#topic, { partition, fromOffset: head.lastOffset, maxBytes: 1, signal });
      const step = await records.next();
      const visibleMs = performance.now();
      await records.return(undefined);
      if (step.done === true) break; // aborted, or the engine closed
      this.#wakeUps++;
      const { highWatermark } = this.#ferry.fetch(this.#topic, partition, head.lastOffset + 1, { maxBytes: 1 });
      let index = this.#heads[partition]!;
      for (; index < queue.length && queue[index]!.lastOffset < highWatermark; index++) {
        const latencyMs = visibleMs - queue[index]!.dueMs;
        this.latency.recordMs(latencyMs);
        for (const recorder of this.#also) recorder.recordMs(latencyMs);
      }
      this.#heads[partition] = index;
      if (index > 4096 && index * 2 > queue.length) {
        queue.splice(0, index);
        this.#heads[partition] = 0;
      }
    }
  }
}
