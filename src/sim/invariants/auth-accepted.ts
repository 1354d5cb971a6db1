import type { HistoryIndex } from '../history-index.ts';
import type { PartitionRef, ViolationList } from '../violation.ts';
import { credentialStandingOf } from './credential-standing.ts';

export const AUTH_ACCEPTED = 'auth-accepted';

/** Kafka's refusal of a SASL exchange whose credential does not match (SaslAuthenticationException). */
const WRONG_CREDENTIAL = 'SASL_AUTHENTICATION_FAILED';
/** Errors that answer only a SASL exchange gone wrong: never a request of an authenticated session. */
const AUTHENTICATION_ERRORS: ReadonlySet<string> = new Set([WRONG_CREDENTIAL, 'ILLEGAL_SASL_STATE', 'UNSUPPORTED_SASL_MECHANISM']);
const RUN_WIDE: PartitionRef = { topic: '', incarnation: 0, partition: -1 };

/**
 * auth-accepted (issues 13 and 25): a legitimate client's credential is good wherever it stands.
 * Every SASL exchange of one that a broker answered (its first, and each re-authentication,
 * KIP-368) succeeded, and the broker proved itself (SCRAM's server signature), if the credential it
 * used surely stood at that broker (credential-standing.ts): PLAIN's always (its table never
 * changes), a SCRAM credential from the change that set it (or from the start) until the next
 * change of that user's credential of that mechanism was sent. Where it may have been replaced or
 * deleted there, the one refusal it may get is SASL_AUTHENTICATION_FAILED. An exchange that got no
 * answer (a broker gone, a connection cut) is not judged. And a session, once authenticated, is
 * served until it ends, whatever becomes of the credential it began with: no request of a
 * legitimate client is answered with an authentication error.
 */
export function checkAuthAccepted(index: HistoryIndex, out: ViolationList): void {
  const standing = credentialStandingOf(index);
  const legitimate = index.history.security?.users ?? {};
  for (const op of index.history.ops) {
    if (op.kind !== 'authenticate') {
      if (op.kind === 'intruder' || op.outcome.ok || !op.outcome.answered || !AUTHENTICATION_ERRORS.has(op.outcome.error) || legitimate[op.client] === undefined) continue;
      out.add(AUTH_ACCEPTED, RUN_WIDE, 'an authenticated session was refused', null, `${op.client}'s ${op.kind} to node ${op.node} was answered ${op.outcome.error}`, op.startMs);
      continue;
    }
    if (op.outcome.ok || !op.outcome.answered) continue;
    const stood = standing(op);
    if (op.outcome.error === WRONG_CREDENTIAL && stood !== true) continue;
    const what = op.reauthentication ? 'a re-authentication' : 'an authentication';
    const credential = `credential ${op.credential ?? 0}${stood === true ? ', which stood there' : ''}`;
    out.add(
      AUTH_ACCEPTED,
      RUN_WIDE,
      'a legitimate authentication was refused',
      null,
      `${what} of ${op.client} with ${op.mechanism} (${credential}; SaslHandshake v${op.handshakeVersion}) at node ${op.node} was answered ${op.outcome.error}`,
      op.startMs,
    );
  }
}
