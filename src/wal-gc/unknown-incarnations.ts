import type { Counter } from '../metrics/index.ts';
import type { Logger } from '../observability/logger.ts';
import type { Uuid } from '../util/uuid.ts';

/**
 * Incarnations named once each (a bounded memory: past it a line may repeat, never a frame go).
 * Each costs a short string; a broker meets a few (an empty disk over a store with history).
 */
const UNKNOWN_INCARNATIONS_NAMED_MAX = 10_000;

/**
 * DI1 (docs/tier-protocol.md): frames of an incarnation no control record names (neither a topic
 * naming it nor its deletion record) are kept. Each such incarnation is named in one log line and
 * counted once, so an operator learns what the store holds that nobody claims.
 */
export class UnknownIncarnations {
  readonly #log: Logger;
  readonly #counted: Counter | null;
  readonly #named = new Set<string>();

  constructor(log: Logger, counted: Counter | null) {
    this.#log = log;
    this.#counted = counted;
  }

  /** A pass kept frames of `topic` incarnation `topicId`, which no record names. */
  readonly report = (topic: string, topicId: Uuid): void => {
    const key = `${topic}\u0000${topicId}`;
    if (this.#named.has(key)) return;
    if (this.#named.size >= UNKNOWN_INCARNATIONS_NAMED_MAX) this.#named.clear();
    this.#named.add(key);
    this.#counted?.add();
    this.#log.warn(
      { topic, topicId },
      `WAL garbage collection keeps the frames of topic ${topic} (id ${topicId}): no control record names that incarnation, neither its topic nor a deletion record (a store shared with another engine, or a topic deleted before deletion records existed); only a deletion record lets them go`,
    );
  };
}
