/**
 * Config changes under load (issue 25, item 4): IncrementalAlterConfigs during the chaos of the
 * configs other invariants stand on, with drawn values: min.insync.replicas (1..RF: what
 * acks-all-min-insync and acks-resume-with-quorum judge by, config-timeline.ts), retention.ms and
 * retention.bytes (retention then legitimately removes a prefix of the log, tier included:
 * acked-durable demands records only from the final log start), and segment.bytes (Kafka's floor
 * is 1 MiB, KIP-1030: a topic then rolls far less often; DELETE brings the run's small segments
 * back). A value of null is a DELETE: the config goes back to the broker's default.
 *
 * Its draws come from a random stream of their own (run.ts salts it): a run without these changes
 * draws everything else as it did before they existed.
 */
import type { Clock } from '../util/clock.ts';
import type { SeededRandom } from '../util/random.ts';
import type { SimAdmin } from './client/index.ts';
import type { AlterConfigsOp } from './history.ts';
import { MIN_INSYNC_REPLICAS } from './config-timeline.ts';

/** The share of runs with config changes at all. */
export const CONFIG_CHANGE_SHARE = 0.5;
/** Mean simulated ms between two changes (a Poisson process over the chaos). */
const CHANGE_INTERVAL_MS_MEAN = 5_000;
/**
 * retention.ms: ten seconds at least, so that a record outlives its read-back (the probes read
 * theirs at once); -1 keeps everything; null goes back to the default (7 days, or the tiering
 * run's own retention).
 */
const RETENTIONS_MS = ['10000', '30000', '-1', null];
/** retention.bytes: many segments and several batches near max.message.bytes, for the same reason. */
const RETENTIONS_BYTES = [String(128 * 1024), String(512 * 1024), '-1', null];
/** segment.bytes: Kafka's floor (a topic config may not go lower, KIP-1030), or back to the run's own. */
const SEGMENT_BYTES = [String(1024 * 1024), null];

export interface ConfigChangeLoadOptions {
  readonly admin: SimAdmin;
  readonly clock: Clock;
  readonly random: SeededRandom;
  /** The workload's topics now. */
  readonly topics: () => readonly string[];
  readonly chaosMs: number;
  /** The topics' replication factor: min.insync.replicas is drawn in 1..RF (above, acks=all could never succeed). */
  readonly replicationFactor: number;
  /** Whether the chaos is over (no change starts after it). */
  readonly over: () => boolean;
}

export class ConfigChangeLoad {
  readonly #options: ConfigChangeLoadOptions;

  constructor(options: ConfigChangeLoadOptions) {
    this.#options = options;
  }

  /** Runs until the chaos ends (draws first whether this run changes configs at all). */
  async run(): Promise<void> {
    const { random, chaosMs } = this.#options;
    if (random.next() >= CONFIG_CHANGE_SHARE) return;
    let elapsedMs = 0;
    for (;;) {
      const waitMs = random.nextExponential(CHANGE_INTERVAL_MS_MEAN);
      elapsedMs += waitMs;
      if (elapsedMs >= chaosMs) return;
      await this.#sleep(waitMs);
      if (this.#options.over()) return;
      const topics = this.#options.topics();
      const topic = topics[random.nextInt(topics.length)]!;
      await this.#options.admin.alterConfigs(topic, [this.#drawChange()]);
    }
  }

  #drawChange(): AlterConfigsOp['configs'][number] {
    const { random, replicationFactor } = this.#options;
    const kinds = replicationFactor > 1 ? 4 : 3; // with one replica min.insync.replicas has one value
    switch (random.nextInt(kinds)) {
      case 0:
        return { name: 'retention.ms', value: pick(random, RETENTIONS_MS) };
      case 1:
        return { name: 'retention.bytes', value: pick(random, RETENTIONS_BYTES) };
      case 2:
        return { name: 'segment.bytes', value: pick(random, SEGMENT_BYTES) };
      default:
        return { name: MIN_INSYNC_REPLICAS, value: String(1 + random.nextInt(replicationFactor)) };
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => void this.#options.clock.setTimer(ms, resolve));
  }
}

function pick<T>(random: SeededRandom, values: readonly T[]): T {
  return values[random.nextInt(values.length)]!;
}
