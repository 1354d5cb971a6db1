/**
 * Where each ACL of a run stood in the control records over time, from the admin's creates and
 * deletes alone (the history's AclChangeOps): for a span of time, whether the ACL surely stood
 * throughout, surely never did, or either.
 *
 * Each create or delete takes effect at one moment between when it was sent and when it was
 * answered, if it was answered ok; one answered with an error may have taken effect in that span
 * or not at all (a write whose answer was lost may have landed); one never answered may take
 * effect at any later moment or never (a paused broker may still hold the request, seed 30102);
 * one never sent ('not-sent') had no effect. At a moment t the ACL is as the last change to take
 * effect by t left it (absent before any). A change can be that last one iff it could take effect
 * by t no earlier than every change answered ok by t was sent (those surely took effect by t).
 */
import type { AclChangeOp } from './history.ts';
import type { Truth } from './acl-model.ts';
import type { SimAcl } from './security-setup.ts';

/** A request that never left its client: it had no effect. */
const NOT_SENT = 'not-sent';

interface Change {
  readonly startMs: number;
  /** When it was answered; Infinity: never (it may take effect any time later). */
  readonly endMs: number;
  readonly ok: boolean;
  /** What it leaves: the ACL there (create) or not (delete). */
  readonly present: boolean;
}

/** One ACL and its changes, by when each was sent. */
export interface AclLife {
  readonly acl: SimAcl;
  readonly changes: readonly Change[];
}

export function aclKey(acl: SimAcl): string {
  return [acl.principal, acl.resourceType, acl.patternType, acl.resourceName, acl.operation, acl.permission].join('\u0000');
}

/** Every ACL the run created or deleted, with its changes. */
export function aclLives(ops: readonly AclChangeOp[]): AclLife[] {
  const lives = new Map<string, { acl: SimAcl; changes: Change[] }>();
  for (const op of ops) {
    if (!op.outcome.ok && op.outcome.error === NOT_SENT) continue;
    const acl: SimAcl = { principal: op.principal, resourceType: op.resourceType, resourceName: op.resourceName, patternType: op.patternType, operation: op.operation, permission: op.permission };
    const key = aclKey(acl);
    let life = lives.get(key);
    if (life === undefined) lives.set(key, (life = { acl, changes: [] }));
    const answered = op.outcome.ok || op.outcome.answered;
    life.changes.push({ startMs: op.startMs, endMs: answered ? op.endMs : Infinity, ok: op.outcome.ok, present: op.kind === 'create-acl' });
  }
  for (const life of lives.values()) life.changes.sort((a, b) => a.startMs - b.startMs);
  return [...lives.values()];
}

/**
 * Whether the ACL stood at every moment of [fromMs, toMs] (true), at none (false), or either
 * (null). fromMs may be -Infinity (a broker whose view may be any older one).
 */
export function presenceOver(life: AclLife, fromMs: number, toMs: number): Truth {
  const floor = latestSureStart(life, fromMs);
  let mayBePresent = false;
  // Absent before any change: the state at fromMs if no change surely took effect by then.
  let mayBeAbsent = floor === -Infinity;
  for (const change of life.changes) {
    if (change.startMs > toMs) break;
    // Taking effect as late as it can within the window, it is the last by then unless a change answered ok since was sent after that.
    const at = Math.max(fromMs, change.startMs);
    if (Math.min(change.endMs, at) < latestSureStart(life, at)) continue;
    if (change.present) mayBePresent = true;
    else mayBeAbsent = true;
    if (mayBePresent && mayBeAbsent) return null;
  }
  if (mayBePresent === mayBeAbsent) return null; // neither cannot happen; both: either
  return mayBePresent;
}

/** The latest send time of a change answered ok by `atMs` (it surely took effect by then); -Infinity: none. */
function latestSureStart(life: AclLife, atMs: number): number {
  let latest = -Infinity;
  for (const change of life.changes) if (change.ok && change.endMs <= atMs) latest = Math.max(latest, change.startMs);
  return latest;
}
