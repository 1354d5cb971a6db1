import type { Clock } from '../util/clock.ts';
import type { LogFields, Logger } from './logger.ts';

/**
 * How often long work (a rebuild, a follower catching up, a tier backlog) says how far it got:
 * often enough that an operator watching a takeover sees it move, rarely enough that a backlog of
 * thousands of segments is a few lines a minute, not thousands.
 */
export const PROGRESS_INTERVAL_MS = 10_000;

/**
 * Rate-limited progress lines (info, with `done` and `total`), one spell per key: the first
 * update of a spell is said at once, later ones at most once per interval, and `finish` ends
 * the spell (the next update starts a new one). Keys are what is being worked on (a partition),
 * so the map holds at most one entry per partition in progress.
 */
export class ProgressLines {
  readonly #logger: Logger;
  readonly #clock: Clock;
  readonly #intervalMs: number;
  /** Per key in progress: when its last line was said (monotonic ms). */
  readonly #saidMs = new Map<string, number>();

  constructor(logger: Logger, clock: Clock, intervalMs = PROGRESS_INTERVAL_MS) {
    this.#logger = logger;
    this.#clock = clock;
    this.#intervalMs = intervalMs;
  }

  /** `done` of `total` (in the unit `fields` or `message` name): said when the spell starts or an interval has passed. */
  update(key: string, fields: LogFields, done: number, total: number, message: string): void {
    const nowMs = this.#clock.monotonicMs();
    const said = this.#saidMs.get(key);
    if (said !== undefined && nowMs - said < this.#intervalMs) return;
    this.#saidMs.set(key, nowMs);
    this.#logger.info({ ...fields, done, total }, message);
  }

  /** Ends the spell of `key`; whether one was in progress. */
  finish(key: string): boolean {
    return this.#saidMs.delete(key);
  }
}

/**
 * Offsets behind the leader's high watermark from which a follower's catch-up is progress worth a
 * line: a follower at the tail trails by a batch or two; one this far behind is rebuilding history.
 */
export const CATCH_UP_PROGRESS_OFFSETS_MIN = 10_000;

/**
 * Followers far behind their leader: how far they got (ProgressLines: now and then), and once
 * within CATCH_UP_PROGRESS_OFFSETS_MIN of the leader's high watermark, one line that they caught up.
 */
export class CatchUpProgress {
  readonly #logger: Logger;
  readonly #lines: ProgressLines;
  readonly #offsetsMin: number;

  constructor(logger: Logger, clock: Clock, offsetsMin = CATCH_UP_PROGRESS_OFFSETS_MIN, intervalMs = PROGRESS_INTERVAL_MS) {
    this.#logger = logger;
    this.#lines = new ProgressLines(logger, clock, intervalMs);
    this.#offsetsMin = offsetsMin;
  }

  /** The follower of `topic`-`partition` applied up to `logEnd`; its leader's high watermark is `leaderHighWatermark` (null: not heard yet). */
  applied(topic: string, partition: number, logEnd: number, leaderHighWatermark: number | null): void {
    const key = `${topic}-${partition}`;
    if (leaderHighWatermark !== null && leaderHighWatermark - logEnd > this.#offsetsMin) {
      this.#lines.update(key, { topic, partition }, logEnd, leaderHighWatermark, `catching up on ${key}: at offset ${logEnd} of the leader's ${leaderHighWatermark}`);
    } else if (this.#lines.finish(key)) {
      this.#logger.info({ topic, partition, offset: logEnd }, `${key} caught up with its leader at offset ${logEnd}`);
    }
  }
}
