/**
 * Whether a record a broker reads again and again (an ACL, a SCRAM credential) stood in the
 * control records over a span of time, from the changes to it that the history shows.
 *
 * Each change takes effect at one moment between when it was sent and when it was answered, if it
 * was answered ok; one answered with an error may have taken effect in that span or not at all (a
 * write whose answer was lost may have landed); one never answered may take effect at any later
 * moment or never (a paused broker may still hold the request, seed 30102); one never sent
 * ('not-sent') had no effect. At a moment t the record is as the last change to take effect by t
 * left it (as it was at the start before any). A change can be that last one iff it could take
 * effect by t no earlier than every change answered ok by t was sent (those surely took effect by t).
 */
import type { Outcome } from './history.ts';
import type { Truth } from './acl-model.ts';

/** A request that never left its client: it had no effect. */
const NOT_SENT = 'not-sent';

export interface Change {
  readonly startMs: number;
  /** When it was answered; Infinity: never (it may take effect any time later). */
  readonly endMs: number;
  readonly ok: boolean;
  /** What it leaves: the record there, or not. */
  readonly present: boolean;
}

/** One record's changes, by when each was sent, and whether it stood before any. */
export interface Life {
  readonly initially: boolean;
  readonly changes: readonly Change[];
}

/** The change a request made, or null if it was never sent. */
export function changeOf(op: { readonly startMs: number; readonly endMs: number; readonly outcome: Outcome }, present: boolean): Change | null {
  if (!op.outcome.ok && op.outcome.error === NOT_SENT) return null;
  const answered = op.outcome.ok || op.outcome.answered;
  return { startMs: op.startMs, endMs: answered ? op.endMs : Infinity, ok: op.outcome.ok, present };
}

/**
 * Whether the record stood at every moment of [fromMs, toMs] (true), at none (false), or either
 * (null). fromMs may be -Infinity (a broker whose view may be any older one).
 */
export function presenceOver(life: Life, fromMs: number, toMs: number): Truth {
  let mayBePresent = false;
  let mayBeAbsent = false;
  // As at the start: the state at fromMs if no change surely took effect by then.
  if (latestSureStart(life, fromMs) === -Infinity) {
    if (life.initially) mayBePresent = true;
    else mayBeAbsent = true;
  }
  for (const change of life.changes) {
    if (change.startMs > toMs) break;
    // Taking effect as late as it can within the window, it is the last by then unless a change answered ok since was sent after that.
    const at = Math.max(fromMs, change.startMs);
    if (Math.min(change.endMs, at) < latestSureStart(life, at)) continue;
    if (change.present) mayBePresent = true;
    else mayBeAbsent = true;
    if (mayBePresent && mayBeAbsent) return null;
  }
  return mayBePresent === mayBeAbsent ? null : mayBePresent;
}

/** The latest send time of a change answered ok by `atMs` (it surely took effect by then); -Infinity: none. */
function latestSureStart(life: Life, atMs: number): number {
  let latest = -Infinity;
  for (const change of life.changes) if (change.ok && change.endMs <= atMs) latest = Math.max(latest, change.startMs);
  return latest;
}
