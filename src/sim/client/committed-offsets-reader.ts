/**
 * Reads a group's committed offsets as they stand once its members stopped: an OffsetFetch of
 * every partition of the given topics from the group's coordinator (an OffsetFetchOp each, which
 * the invariants judge like any other), tried again until one is answered without error.
 */
import { BrokerPool } from './brokers.ts';
import { backoffMs, type ClientContext, type ClientOptions, clientContext, type SimClient, sleep } from './context.ts';
import { GroupRequests } from './group-requests.ts';

export interface CommittedOffsetsReaderOptions extends ClientOptions {
  readonly group: string;
}

export class SimCommittedOffsetsReader implements SimClient {
  readonly #context: ClientContext;
  readonly #pool: BrokerPool;
  readonly #requests: GroupRequests;

  constructor(options: CommittedOffsetsReaderOptions) {
    this.#context = clientContext(options);
    this.#pool = new BrokerPool(this.#context);
    this.#requests = new GroupRequests(this.#context, this.#pool, options.group);
  }

  get name(): string {
    return this.#context.name;
  }

  start(): void {}

  async stop(): Promise<void> {
    this.#pool.close();
  }

  /** Whether an OffsetFetch of every partition was answered without error within `withinMs`. */
  async read(topics: readonly { readonly name: string; readonly partitions: number }[], withinMs: number): Promise<boolean> {
    const assigned = topics.map((topic) => ({ topic: topic.name, partitions: Array.from({ length: topic.partitions }, (_, partition) => partition) }));
    const deadlineMs = this.#context.clock.nowMs() + withinMs;
    while (this.#context.clock.nowMs() < deadlineMs) {
      const coordinator = await this.#requests.findCoordinator();
      if (coordinator !== null && (await this.#requests.offsetFetch(coordinator, assigned))?.ok === true) return true;
      await sleep(this.#context.clock, backoffMs(this.#context));
    }
    return false;
  }
}
