/**
 * A bench's peak RSS printed beside the bound its engine's limits imply (rss-bounds.ts) and
 * judged as a target: one line and one TargetResult per process measured. In-process benches
 * measure themselves with `OwnRssRun`, from their start to their end.
 */
import type { TargetResult } from '../report/results.ts';
import { mib, ownRss, RssSampler, type RssWindow } from './rss.ts';
import { describeRssBound, rssBound, type RssTerm } from './rss-bounds.ts';
import { atMost } from './targets.ts';
import { formatNumber } from './units.ts';

/** An in-process bench's RSS is sampled this often; its peak is the kernel's high-water mark. */
const OWN_RSS_SAMPLE_INTERVAL_MS = 100;

/** Prints `what`'s peak beside its bound and returns the target "peak <= bound". */
export function judgeRssPeak(bench: string, what: string, peakBytes: number, startRssBytes: number, liveTerms: readonly RssTerm[]): TargetResult {
  const bound = rssBound(startRssBytes, liveTerms);
  console.log(`${what}: RSS peak ${formatNumber(mib(peakBytes))} MiB; bound ${describeRssBound(bound, startRssBytes)}`);
  return atMost(bench, `${what}: RSS peak`, mib(peakBytes), mib(bound.boundBytes), ' MiB');
}

/** The bench's own process from `start` (before its first case) to `finish`. */
export class OwnRssRun {
  readonly #bench: string;
  readonly #startRssBytes: number;
  readonly #sampler: RssSampler;

  constructor(bench: string) {
    this.#bench = bench;
    this.#startRssBytes = ownRss().current()!;
    this.#sampler = new RssSampler(ownRss(), OWN_RSS_SAMPLE_INTERVAL_MS).start();
  }

  /** Stops sampling; prints the peak beside the bound for what the run held live, and judges it. */
  finish(liveTerms: readonly RssTerm[]): { window: RssWindow; target: TargetResult } {
    const window = this.#sampler.stop()!; // process.memoryUsage() always answers for the own process
    return { window, target: judgeRssPeak(this.#bench, `${this.#bench} bench process`, window.peakBytes, this.#startRssBytes, liveTerms) };
  }
}
