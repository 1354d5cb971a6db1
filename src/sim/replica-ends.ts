import type { ReplicaEnd } from './history.ts';
import type { SimBrokerHost } from './broker-process.ts';
import type { Ferry } from '../engine/ferry.ts';
import { isFerryError } from '../errors.ts';

/**
 * Records every replica's log end offset as it changes, from outside the brokers: after each
 * event the harness asks each live process's engine (from the moment it exists: a starting broker
 * already adopts and follows partitions) where the log of each partition it serves ends
 * (leader or follower). acks-all-min-insync judges from it how many replicas held a record when it
 * was acknowledged. A change and the event that caused it share a simulated instant, and any
 * report a follower sends of it reaches the leader in a later event, so nothing a leader counted
 * is recorded later than it counted it.
 */
export class ReplicaEndRecorder {
  readonly #hosts: readonly SimBrokerHost[];
  readonly #topics: readonly { readonly name: string; readonly partitions: number }[];
  readonly #nowMs: () => number;
  /** The last end recorded per node and partition. */
  readonly #last = new Map<string, number>();
  readonly #ends: ReplicaEnd[] = [];

  /** `topics`: the scenario's (a re-create keeps the name and the partition count); `nowMs`: on the ops' time base. */
  constructor(hosts: readonly SimBrokerHost[], topics: readonly { readonly name: string; readonly partitions: number }[], nowMs: () => number) {
    this.#hosts = hosts;
    this.#topics = topics;
    this.#nowMs = nowMs;
  }

  /** Notes every end that changed since the last call. */
  sample(): void {
    const topics = this.#topics;
    for (const host of this.#hosts) {
      const engine = host.engine;
      if (engine === null) continue;
      const node = host.settings.nodeId;
      for (const { name, partitions } of topics) {
        for (let partition = 0; partition < partitions; partition++) {
          const logEndOffset = endOf(engine, name, partition);
          if (logEndOffset !== null) this.#note(node, name, partition, logEndOffset);
        }
      }
    }
  }

  #note(node: number, topic: string, partition: number, logEndOffset: number): void {
    const key = `${node}\u0000${topic}\u0000${partition}`;
    if (this.#last.get(key) === logEndOffset) return;
    this.#last.set(key, logEndOffset);
    this.#ends.push({ node, topic, partition, atMs: this.#nowMs(), logEndOffset });
  }

  get ends(): readonly ReplicaEnd[] {
    return this.#ends;
  }
}

/** Where the engine's log of the partition ends; null when it does not serve it (or is closed: a stopping broker holds nothing any more). */
function endOf(engine: Ferry, topic: string, partition: number): number | null {
  if (!engine.serves(topic, partition)) return null;
  try {
    return engine.logEndOffset(topic, partition);
  } catch (error) {
    if (isFerryError(error, 'Closed')) return null;
    throw error;
  }
}
