import { isUuid, type Uuid } from '../util/uuid.ts';
import type { Versioned } from '../control/control-store.ts';
import type { Lease } from './lease.ts';
import type { TopicRecord } from './control-records.ts';

interface Sighting {
  /** The incarnation seen alive; null: the topic was seen gone (or marked), or this broker deleted it. */
  readonly topicId: Uuid | null;
  /** Monotonic start of the read that saw it. */
  readonly atMs: number;
}

/**
 * [L8] When this broker last saw each topic's incarnation alive in the control store (its topic
 * record naming that id, not marked `deleting`), by the start of the read that saw it. A leader
 * acknowledges on a topic only while such a sighting stands: a broker whose scans are slow or stuck
 * (a rebuild waiting out an unreachable WAL store) would otherwise go on acknowledging into an
 * incarnation deleted meanwhile, and the name created again, for as long as its lease holds.
 * A delete waits the longest lease of any broker after its mark before the name can be created
 * again, so every sighting from before the mark has lapsed by then (the held share of a lease is
 * shorter).
 */
export class TopicSightings {
  readonly #lease: Lease;
  readonly #seen = new Map<string, Sighting>();

  constructor(lease: Lease) {
    this.#lease = lease;
  }

  /** A read of every topic record that started at `startedMs` (monotonic) returned `records`. */
  observe(startedMs: number, records: Iterable<readonly [string, Versioned<TopicRecord>]>): void {
    const alive = new Map<string, Uuid>();
    for (const [name, { value }] of records) if (isUuid(value.topicId) && value.deleting !== true) alive.set(name, value.topicId);
    for (const name of new Set([...this.#seen.keys(), ...alive.keys()])) this.#note(name, alive.get(name) ?? null, startedMs);
    // A topic seen gone a lease ago needs no memory: a read from before that would have lapsed on arrival.
    for (const [name, { topicId, atMs }] of this.#seen) if (topicId === null && !this.#lease.stillHolds(atMs)) this.#seen.delete(name);
  }

  /** This broker marked `topic` for deletion after `markedMs` (monotonic): no read from before counts. */
  deleted(topic: string, markedMs: number): void {
    this.#note(topic, null, markedMs);
  }

  #note(topic: string, topicId: Uuid | null, atMs: number): void {
    const previous = this.#seen.get(topic);
    if (previous !== undefined && previous.atMs >= atMs) return; // never an older read over a newer one
    this.#seen.set(topic, { topicId, atMs });
  }

  /** Whether `topicId` of `topic` was seen alive by a read that started within the held share of a lease. */
  standing(topic: string, topicId: Uuid): boolean {
    const sighting = this.#seen.get(topic);
    return sighting !== undefined && sighting.topicId === topicId && this.#lease.stillHolds(sighting.atMs);
  }
}
