/**
 * A simulated consumer of one partition (no group): fetches from the partition's leader from a
 * start offset, for as long as it runs. Every Fetch is a FetchOp in the history.
 */
import { BrokerPool } from './brokers.ts';
import { type ClientContext, type ClientOptions, clientContext, type SimClient } from './context.ts';
import { PartitionFetcher } from './partition-fetcher.ts';

export interface ConsumerOptions extends ClientOptions {
  readonly topic: string;
  readonly partition: number;
  /** The first offset to read; 'earliest': the log start (ListOffsets). */
  readonly startOffset: number | 'earliest';
  /** How long the broker may hold a Fetch with nothing to return. */
  readonly maxWaitMs?: number;
}

export class SimConsumer implements SimClient {
  readonly #context: ClientContext;
  readonly #pool: BrokerPool;
  readonly #fetcher: PartitionFetcher;
  #running = false;
  #loop: Promise<void> = Promise.resolve();

  constructor(options: ConsumerOptions) {
    this.#context = clientContext(options);
    this.#pool = new BrokerPool(this.#context);
    this.#fetcher = new PartitionFetcher(this.#context, this.#pool, options.topic, options.partition, options.startOffset === 'earliest' ? null : options.startOffset, options.maxWaitMs);
  }

  get name(): string {
    return this.#context.name;
  }

  /** The next offset it will read; null while it looks the earliest one up. */
  get position(): number | null {
    return this.#fetcher.position;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  /** Stops after the step in progress; the connection closes at once (a fetch in flight ends unanswered). */
  stop(): Promise<void> {
    this.#running = false;
    this.#pool.close();
    return this.#loop;
  }

  async #run(): Promise<void> {
    while (this.#running) await this.#fetcher.step();
  }
}
