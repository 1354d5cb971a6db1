/**
 * Where each ACL of a run stood in the control records over time, from the admin's creates and
 * deletes alone (the history's AclChangeOps; presence.ts says how a change may take effect).
 */
import type { AclChangeOp } from './history.ts';
import { type Change, changeOf, type Life } from './presence.ts';
import type { SimAcl } from './security-setup.ts';

/** One ACL and its changes, by when each was sent (absent before any). */
export interface AclLife extends Life {
  readonly acl: SimAcl;
}

export function aclKey(acl: SimAcl): string {
  return [acl.principal, acl.resourceType, acl.patternType, acl.resourceName, acl.operation, acl.permission].join('\u0000');
}

/** Every ACL the run created or deleted, with its changes. */
export function aclLives(ops: readonly AclChangeOp[]): AclLife[] {
  const lives = new Map<string, { acl: SimAcl; initially: false; changes: Change[] }>();
  for (const op of ops) {
    const change = changeOf(op, op.kind === 'create-acl');
    if (change === null) continue;
    const acl: SimAcl = { principal: op.principal, resourceType: op.resourceType, resourceName: op.resourceName, patternType: op.patternType, operation: op.operation, permission: op.permission };
    const key = aclKey(acl);
    let life = lives.get(key);
    if (life === undefined) lives.set(key, (life = { acl, initially: false, changes: [] }));
    life.changes.push(change);
  }
  for (const life of lives.values()) life.changes.sort((a, b) => a.startMs - b.startMs);
  return [...lives.values()];
}
