import type { ReplicaEnd } from './history.ts';
import type { OpenedEngine } from '../engine/index.ts';
import { isFerryError } from '../errors.ts';

/** What the recorder reads of a broker host (SimBrokerHost): its node and its current process's engine, if any. */
export interface ReplicaHost {
  readonly settings: { readonly nodeId: number };
  readonly engine: OpenedEngine | null;
}

/**
 * Records every replica's log end offset as it changes, from outside the brokers: after each
 * event the harness asks each live process's engine (from the moment it exists: a starting broker
 * already adopts and follows partitions) where the log of each partition it serves ends
 * (leader or follower). acks-all-min-insync judges from it how many replicas held a record when it
 * was acknowledged. A change and the event that caused it share a simulated instant, and any
 * report a follower sends of it reaches the leader in a later event, so nothing a leader counted
 * is recorded later than it counted it. A node that stops serving a partition (released, its
 * process gone) has no end until it serves it again, and its first end then is a change even if
 * it equals the last one before: a log rebuilt from the chain to where a discarded one ended holds
 * other records, and the checker counts a replica only from ends recorded after a batch was sent.
 */
export class ReplicaEndRecorder {
  readonly #hosts: readonly ReplicaHost[];
  readonly #topics: readonly { readonly name: string; readonly partitions: number }[];
  readonly #nowMs: () => number;
  /**
   * The last end recorded per host, topic and partition while the node serves it (NO_END: it does
   * not), flat in that order: this runs after every event of a run, so it indexes, never keys.
   */
  readonly #last: Float64Array;
  readonly #ends: ReplicaEnd[] = [];

  /** `topics`: the scenario's (a re-create keeps the name and the partition count); `nowMs`: on the ops' time base. */
  constructor(hosts: readonly ReplicaHost[], topics: readonly { readonly name: string; readonly partitions: number }[], nowMs: () => number) {
    this.#hosts = hosts;
    this.#topics = topics;
    this.#nowMs = nowMs;
    const slotsPerHost = topics.reduce((sum, topic) => sum + topic.partitions, 0);
    this.#last = new Float64Array(hosts.length * slotsPerHost).fill(NO_END);
  }

  /** Notes every end that changed since the last call. */
  sample(): void {
    const topics = this.#topics;
    const last = this.#last;
    let slot = 0;
    for (const host of this.#hosts) {
      const engine = host.engine;
      const node = host.settings.nodeId;
      for (const { name, partitions } of topics) {
        for (let partition = 0; partition < partitions; partition++, slot++) {
          const logEndOffset = engine === null ? null : endOf(engine, name, partition);
          if (logEndOffset === null) last[slot] = NO_END;
          else if (last[slot] !== logEndOffset) {
            last[slot] = logEndOffset;
            this.#ends.push({ node, topic: name, partition, atMs: this.#nowMs(), logEndOffset });
          }
        }
      }
    }
  }

  get ends(): readonly ReplicaEnd[] {
    return this.#ends;
  }
}

/** A slot of a partition its node does not serve (no log ends below 0). */
const NO_END = -1;

/** Where the engine's log of the partition ends; null when it does not serve it (or is closed: a stopping broker holds nothing any more). */
function endOf(engine: NonNullable<ReplicaHost['engine']>, topic: string, partition: number): number | null {
  if (!engine.serves(topic, partition)) return null;
  try {
    return engine.logEndOffset(topic, partition);
  } catch (error) {
    if (isFerryError(error, 'Closed')) return null;
    throw error;
  }
}
