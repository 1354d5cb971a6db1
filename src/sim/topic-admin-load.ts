/**
 * Issue 12's admin operations in the chaos, at a modest rate so that produce and consume stay
 * what a run mostly does: DeleteRecords of a partition up to an offset at or below what was
 * acknowledged there (or -1, the high watermark), CreatePartitions of one or two more on a topic,
 * and IncrementalAlterConfigs of a config that changes no other invariant's ground (the
 * timestamp type, an unlimited retention.bytes, a larger max.message.bytes).
 *
 * Its draws come from a random stream of their own (run.ts salts it), so a run without these
 * operations draws everything else as it did before they existed.
 */
import type { Clock } from '../util/clock.ts';
import type { SeededRandom } from '../util/random.ts';
import type { SimAdmin } from './client/index.ts';
import type { AlterConfigsOp, ClientOp } from './history.ts';

/** The share of runs with these operations at all (the others run as before issue 12). */
export const TOPIC_ADMIN_SHARE = 0.5;
/** Mean simulated ms between two operations (a Poisson process over the chaos). */
const OPERATION_INTERVAL_MS_MEAN = 4_000;
/** Operation weights: DeleteRecords is the one with the most to get wrong (a floor every broker must keep). */
const DELETE_RECORDS_WEIGHT = 0.5;
const CREATE_PARTITIONS_WEIGHT = 0.25;
/** A DeleteRecords asks for the high watermark (-1) this often; otherwise an offset at or below what was acknowledged. */
const DELETE_TO_HIGH_WATERMARK_SHARE = 0.2;
const HIGH_WATERMARK = -1;
/** CreatePartitions adds this many at most, and no topic grows past PARTITIONS_MAX (each partition costs every broker). */
const PARTITIONS_ADDED_MAX = 2;
export const PARTITIONS_MAX = 8;
/** A max.message.bytes above the default (1 MiB + 12): nothing the producers send comes near either. */
const LARGER_MAX_MESSAGE_BYTES = String(2 * 1024 * 1024);
/** Configs that leave every invariant's ground as it is; each alter sets one. */
const SAFE_CONFIGS: readonly AlterConfigsOp['configs'][number][] = [
  { name: 'message.timestamp.type', value: 'LogAppendTime' },
  { name: 'message.timestamp.type', value: 'CreateTime' },
  { name: 'retention.bytes', value: '-1' },
  { name: 'max.message.bytes', value: LARGER_MAX_MESSAGE_BYTES },
];

export interface TopicAdminLoadOptions {
  readonly admin: SimAdmin;
  readonly clock: Clock;
  readonly random: SeededRandom;
  /** The workload's topics and their partition counts: a CreatePartitions that succeeded raises one. */
  readonly topics: Map<string, number>;
  readonly chaosMs: number;
  /** Whether the chaos is over (no operation starts after it). */
  readonly over: () => boolean;
  /** Whether a topic is being deleted and created again: it does not grow then (the create must know its count). */
  readonly recreating: (topic: string) => boolean;
  readonly log: (line: string) => void;
}

export class TopicAdminLoad {
  readonly #options: TopicAdminLoadOptions;
  /** `${topic}/${partition}` → one past the highest offset acknowledged there (any incarnation: a later one may answer OFFSET_OUT_OF_RANGE). */
  readonly #ackedEnds = new Map<string, number>();
  /** Topics a CreatePartitions of unknown outcome may have grown: their counts are read from Metadata before the probes. */
  readonly unsettled = new Set<string>();
  /** An operation is under way: a CreatePartitions answered after the chaos still grows its topic, so the probes wait for it. */
  #inFlight = false;

  constructor(options: TopicAdminLoadOptions) {
    this.#options = options;
  }

  /** Watches the history for acknowledged offsets (what a DeleteRecords may ask for). */
  observe(op: ClientOp): void {
    if (op.kind !== 'produce' || !op.outcome.ok || op.baseOffset === null) return;
    const key = `${op.topic}/${op.partition}`;
    this.#ackedEnds.set(key, Math.max(this.#ackedEnds.get(key) ?? 0, op.baseOffset + op.values.length));
  }

  /** Runs until the chaos ends (draws first whether this run has the operations at all). */
  async run(): Promise<void> {
    const { random, chaosMs } = this.#options;
    if (random.next() >= TOPIC_ADMIN_SHARE) return;
    let elapsedMs = 0;
    for (;;) {
      const waitMs = random.nextExponential(OPERATION_INTERVAL_MS_MEAN);
      elapsedMs += waitMs;
      if (elapsedMs >= chaosMs) return;
      await this.#sleep(waitMs);
      if (this.#options.over()) return;
      this.#inFlight = true;
      try {
        await this.#one();
      } finally {
        this.#inFlight = false;
      }
    }
  }

  /** Whether an operation is under way (it may have started before the chaos ended and be answered after). */
  get inFlight(): boolean {
    return this.#inFlight;
  }

  async #one(): Promise<void> {
    const { random, topics } = this.#options;
    const [topic, partitions] = [...topics][random.nextInt(topics.size)]!;
    const draw = random.next();
    if (draw < DELETE_RECORDS_WEIGHT) {
      const partition = random.nextInt(partitions);
      const ackedEnd = this.#ackedEnds.get(`${topic}/${partition}`) ?? 0;
      const offset = ackedEnd === 0 || random.next() < DELETE_TO_HIGH_WATERMARK_SHARE ? HIGH_WATERMARK : random.nextInt(ackedEnd + 1);
      await this.#options.admin.deleteRecords(topic, partition, offset);
    } else if (draw < DELETE_RECORDS_WEIGHT + CREATE_PARTITIONS_WEIGHT) {
      const count = Math.min(PARTITIONS_MAX, partitions + 1 + random.nextInt(PARTITIONS_ADDED_MAX));
      if (count <= partitions || this.#options.recreating(topic)) return;
      const outcome = await this.#options.admin.createPartitions(topic, count);
      // Grown only on success: an unknown outcome is settled from Metadata before the probes.
      if (outcome.ok) this.grow(topic, count);
      else if (outcome.error !== 'INVALID_PARTITIONS' && outcome.error !== 'UNKNOWN_TOPIC_OR_PARTITION') this.unsettled.add(topic);
    } else {
      const config = SAFE_CONFIGS[random.nextInt(SAFE_CONFIGS.length)]!;
      await this.#options.admin.alterConfigs(topic, [config]);
    }
  }

  /** A topic has (at least) `count` partitions now: producers and probes cover them, a re-create makes as many. */
  grow(topic: string, count: number): void {
    const { topics } = this.#options;
    const known = topics.get(topic);
    if (known === undefined || count <= known) return;
    topics.set(topic, count);
    this.#options.log(`topic ${topic} has ${count} partitions`);
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => void this.#options.clock.setTimer(ms, resolve));
  }
}
