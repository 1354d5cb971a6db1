import type { PartitionLog } from '../log/partition-log.ts';
import { applyFrame } from '../replica/apply.ts';
import { sleep } from '../util/backoff.ts';
import type { Clock } from '../util/clock.ts';
import type { StreamId } from '../wal/keys.ts';
import type { WalReader } from '../wal/reader.ts';

export interface ReplicaTaskOptions {
  /** Reads only this partition's frames. */
  readonly reader: WalReader;
  readonly log: PartitionLog;
  readonly clock: Clock;
  /** Wait after finding nothing new; doubles while the stream stays idle, up to pollIntervalMaxMs. */
  readonly pollIntervalMs: number;
  readonly pollIntervalMaxMs: number;
  /** The partition's chain as the control record now has it. */
  readChain(): Promise<readonly StreamId[]>;
  /** After each applied frame: the follower partition's high watermark moves. */
  applied(): void;
  report?(message: string): void;
}

/**
 * A follower partition of a cluster broker (replication factor > 1): after the rebuild of the
 * sealed streams, it tails the leader's stream, the last of the chain, applying this
 * partition's frames; at a seal it moves to the next stream once the chain names one (a new
 * leader). Reads never touch the leader: only the object store.
 */
export class ReplicaTask {
  readonly #options: ReplicaTaskOptions;
  #running = true;
  readonly #done: Promise<void>;

  constructor(options: ReplicaTaskOptions, chain: readonly StreamId[]) {
    this.#options = options;
    this.#done = this.#run(chain).catch((error: unknown) => options.report?.(`replica of ${options.log.directory} stopped: ${String(error)}`));
  }

  async stop(): Promise<void> {
    this.#running = false;
    await this.#done;
  }

  async #run(initialChain: readonly StreamId[]): Promise<void> {
    const { reader, log, clock, pollIntervalMs, pollIntervalMaxMs } = this.#options;
    let chain = initialChain;
    let index = chain.length - 1;
    let sequence = 0;
    // Idle streams are probed less and less often: every probe of a missing object is a billed GET.
    let idleWaitMs = pollIntervalMs;
    while (this.#running) {
      const stream = chain[index]!;
      const read = await reader.read(stream, sequence).catch(() => ({ kind: 'absent' as const }));
      if (!this.#running) break;
      if (read.kind === 'data') {
        for (const frame of read.frames) applyFrame(log, frame);
        if (read.frames.length > 0) this.#options.applied();
        sequence++;
        idleWaitMs = pollIntervalMs;
        await new Promise((resolve) => setImmediate(resolve));
      } else if (read.kind === 'seal') {
        chain = await this.#options.readChain();
        if (chain.length > index + 1) {
          index++;
          sequence = 0;
        } else {
          await sleep(clock, pollIntervalMs); // sealed, and no successor recorded yet
        }
      } else {
        await sleep(clock, idleWaitMs);
        idleWaitMs = Math.min(pollIntervalMaxMs, idleWaitMs * 2);
      }
    }
  }
}
