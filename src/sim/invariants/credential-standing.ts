import type { Truth } from '../acl-model.ts';
import { CredentialLives } from '../credential-timeline.ts';
import type { AuthenticateOp, ScramChangeOp } from '../history.ts';
import { type HistoryIndex, onBrokerClocksMs } from '../history-index.ts';
import { presenceOver } from '../presence.ts';
import { viewFloorOf } from '../view-floor.ts';

/**
 * Whether the credential a legitimate exchange used surely stood at its broker (true), surely did
 * not (false: replaced or deleted, issue 25), or either: over every moment from the oldest view the
 * broker may have held (healthy for the propagation bound: the SCRAM credentials are read again
 * with the ACLs) to the answer. Without security, or for a client the history names no user of: true.
 */
export function credentialStandingOf(index: HistoryIndex): (op: AuthenticateOp) => Truth {
  const security = index.history.security;
  if (security === undefined) return () => true;
  const lives = new CredentialLives(index.history.ops.filter((op): op is ScramChangeOp => op.kind === 'alter-scram'));
  const floorOf = viewFloorOf(index.history.health, onBrokerClocksMs(index.history, security.aclPropagationMs));
  return (op) => {
    const user = security.users[op.client];
    if (user === undefined) return true;
    const fromMs = op.node < 0 ? -Infinity : floorOf(op.node, op.startMs);
    return presenceOver(lives.lifeOf(user, op.mechanism, op.credential ?? 0), fromMs, op.endMs);
  };
}
