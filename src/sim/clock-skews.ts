import type { FaultEvent } from './history.ts';

/** The fault that sets a broker's wall clock off (faults.ts): its target reads `broker-<node> (<skew> ms)`; `heal clock-skew` sets it back to 0. */
const CLOCK_SKEW = 'clock-skew';
const SKEW_TARGET = /^broker-(\d+) \((-?\d+) ms\)$/;
const HEAL_TARGET = /^broker-(\d+)$/;

interface SkewSpell {
  readonly fromMs: number;
  toMs: number;
  readonly skewMs: number;
}

/**
 * Each broker's wall-clock skew over a run, from its fault events (a broker's monotonic clock is
 * not skewed, only its wall clock: what record timestamps, LogAppendTime and retention.ms read).
 * Spells that overlap on one broker are each taken as in force to their own heal, so a question
 * gets the largest skew that may have held.
 */
export class ClockSkews {
  readonly #spells = new Map<number, SkewSpell[]>();

  constructor(faults: readonly FaultEvent[]) {
    for (const fault of [...faults].sort((a, b) => a.atMs - b.atMs)) {
      if (fault.fault === CLOCK_SKEW) {
        const match = SKEW_TARGET.exec(fault.target);
        if (match === null) continue;
        const node = Number(match[1]);
        let spells = this.#spells.get(node);
        if (spells === undefined) this.#spells.set(node, (spells = []));
        spells.push({ fromMs: fault.atMs, toMs: Infinity, skewMs: Number(match[2]) });
      } else if (fault.fault === `heal ${CLOCK_SKEW}`) {
        const match = HEAL_TARGET.exec(fault.target);
        const open = match === null ? undefined : this.#spells.get(Number(match[1]))?.find((spell) => spell.toMs === Infinity);
        if (open !== undefined) open.toMs = fault.atMs;
      }
    }
  }

  /** How far behind the simulation's time any broker's wall clock read at any time of the run (0 when none was behind). */
  behindMaxMs(): number {
    let behind = 0;
    for (const spells of this.#spells.values()) for (const spell of spells) behind = Math.max(behind, -spell.skewMs);
    return behind;
  }

  /** How far ahead of the simulation's time `node`'s wall clock may have read at `atMs` (0 when not ahead). */
  aheadMaxMs(node: number, atMs: number): number {
    let ahead = 0;
    for (const spell of this.#spells.get(node) ?? []) if (spell.fromMs <= atMs && atMs <= spell.toMs) ahead = Math.max(ahead, spell.skewMs);
    return ahead;
  }
}
