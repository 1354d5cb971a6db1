/**
 * Records that hold one value at a time, each changed by requests the history shows (a user's
 * SCRAM credential of one mechanism, a user's quota of one key, issue 25): where each value stood
 * over time (presence.ts says how a change may take effect). A record holds `initial` until its
 * first change takes effect; each change sets a value and ends whichever stood.
 */
import type { Truth } from './acl-model.ts';
import { type Change, changeOf, type Life, presenceOver } from './presence.ts';

/** A change request of one record: when it ran, how it ended, and the value it sets. */
export interface ValueChange<V> {
  readonly record: string;
  readonly startMs: number;
  readonly endMs: number;
  readonly outcome: Parameters<typeof changeOf>[0]['outcome'];
  readonly value: V;
}

export class ValueLives<V> {
  readonly #initial: V;
  readonly #changes = new Map<string, { change: Change; value: V }[]>();

  constructor(changes: readonly ValueChange<V>[], initial: V) {
    this.#initial = initial;
    for (const request of changes) {
      const change = changeOf(request, true);
      if (change === null) continue;
      let changes = this.#changes.get(request.record);
      if (changes === undefined) this.#changes.set(request.record, (changes = []));
      changes.push({ change, value: request.value });
    }
    for (const changes of this.#changes.values()) changes.sort((a, b) => a.change.startMs - b.change.startMs);
  }

  /** The life of `value` in `record`: there while it is what the last change left (or, before any, the initial value). */
  lifeOf(record: string, value: V): Life {
    const changes = this.#changes.get(record) ?? [];
    return { initially: value === this.#initial, changes: changes.map(({ change, value: set }) => ({ ...change, present: set === value })) };
  }

  /** Each value `record` may have held at some moment of [fromMs, toMs], with whether it held it throughout (true) or maybe (null). */
  valuesOver(record: string, fromMs: number, toMs: number): Map<V, Truth> {
    const candidates = new Set<V>([this.#initial, ...(this.#changes.get(record) ?? []).map(({ value }) => value)]);
    const values = new Map<V, Truth>();
    for (const value of candidates) {
      const present = presenceOver(this.lifeOf(record, value), fromMs, toMs);
      if (present !== false) values.set(value, present);
    }
    return values;
  }
}
