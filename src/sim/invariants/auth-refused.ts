import { type IntruderOp, UNAUTHENTICATED_INTRUDERS } from '../history.ts';
import { clockRateErrorMax, type HistoryIndex } from '../history-index.ts';
import type { PartitionRef } from '../violation.ts';
import type { ViolationList } from '../violation.ts';
import { credentialStandingOf } from './credential-standing.ts';

/** Kafka's answer to a request other than SaslAuthenticate in the middle of a SASL exchange (its error response). */
const ILLEGAL_SASL_STATE = 'ILLEGAL_SASL_STATE';

export const AUTH_REFUSED = 'auth-refused';

/** Kafka's answer to a SASL exchange it refuses (SaslAuthenticationException), and to a handshake for a mechanism it does not enable. */
const REFUSAL_OF: Readonly<Record<string, string>> = { SaslAuthenticate: 'SASL_AUTHENTICATION_FAILED', SaslHandshake: 'UNSUPPORTED_SASL_MECHANISM' };
/** Run-wide: an intruder's requests name no one partition. */
const RUN_WIDE: PartitionRef = { topic: '', incarnation: 0, partition: -1 };

/**
 * auth-refused (issue 13, docs/security.md [A1]-[A6]): an intruder without a valid credential
 * (a wrong password, an unknown user, a mechanism the listener does not enable, no SASL at all)
 * never authenticates. Each SASL exchange it tries ends refused: answered with Kafka's error
 * (SASL_AUTHENTICATION_FAILED; UNSUPPORTED_SASL_MECHANISM to the handshake) or with the
 * connection closed (a refused v0 token gets no answer). A refusal tells no unknown user from a
 * wrong password: for one mechanism, every refusal message those two intruders got is the same.
 * And no data request is answered on a connection that is not authenticated: such an intruder's
 * never (before the exchange succeeds a listener takes only ApiVersions, SaslHandshake and
 * SaslAuthenticate; after a refusal nothing), nor an expired-session intruder's, sent after its
 * session's lifetime ran out (KIP-368: only a re-authentication is taken then). A refusal the
 * broker answers comes no sooner than connection.failed.authentication.delay.ms (on the broker's
 * clock) after the exchange began ([A6]: a guesser gets one guess per delay and connection). And a
 * SCRAM credential replaced or deleted (issue 25) no longer authenticates: a legitimate client's
 * exchange with one that surely no longer stood at its broker (credential-standing.ts) never succeeds.
 */
export function checkAuthRefused(index: HistoryIndex, out: ViolationList): void {
  const messages = new Map<string, Map<string, IntruderOp>>();
  const standing = credentialStandingOf(index);
  for (const op of index.history.ops) {
    if (op.kind === 'authenticate' && op.outcome.ok && standing(op) === false) {
      out.add(
        AUTH_REFUSED,
        RUN_WIDE,
        'a replaced or deleted credential authenticated',
        null,
        `${op.reauthentication ? 'a re-authentication' : 'an authentication'} of ${op.client} with ${op.mechanism} credential ${op.credential ?? 0} at node ${op.node} succeeded after that credential surely no longer stood there`,
        op.startMs,
      );
    }
    if (op.kind !== 'intruder') continue;
    const unauthenticated = UNAUTHENTICATED_INTRUDERS.has(op.intruder);
    if (op.authentication) {
      // The delay is the broker's timer: on a clock running fast by the run's largest error, it is that much shorter.
      if (unauthenticated) checkRefused(op, out, (index.history.security?.failedAuthenticationDelayMs ?? 0) / (1 + clockRateErrorMax(index.history)));
      if ((op.intruder === 'unknown-user' || op.intruder === 'wrong-password') && !op.outcome.ok && op.outcome.answered && op.errorMessage !== null && op.mechanism !== null) {
        let seen = messages.get(op.mechanism);
        if (seen === undefined) messages.set(op.mechanism, (seen = new Map()));
        if (!seen.has(op.errorMessage)) seen.set(op.errorMessage, op);
      }
      continue;
    }
    // A request in the middle of a SASL exchange is answered with nothing but ILLEGAL_SASL_STATE before the close, as Kafka answers it.
    const exchangeRefusal = !op.outcome.ok && op.outcome.answered && op.outcome.error === ILLEGAL_SASL_STATE;
    if ((unauthenticated || op.intruder === 'expired-session') && (op.outcome.ok || op.outcome.answered) && !exchangeRefusal) {
      const answer = op.outcome.ok ? 'ok' : op.outcome.error;
      const standing = op.intruder === 'expired-session' ? 'after its session expired' : 'without authenticating';
      out.add(
        AUTH_REFUSED,
        RUN_WIDE,
        'a data request answered without authentication',
        null,
        `${op.client} (${op.intruder}) sent ${op.api} to node ${op.node} on ${op.listener} ${standing}, and was answered ${answer}`,
        op.startMs,
      );
    }
  }
  for (const [mechanism, seen] of messages) {
    if (seen.size <= 1) continue;
    const [first, second] = [...seen.values()];
    out.add(
      AUTH_REFUSED,
      RUN_WIDE,
      'a refusal tells an unknown user from a wrong password',
      null,
      `${mechanism}: ${first!.client} was refused "${first!.errorMessage}", ${second!.client} "${second!.errorMessage}"`,
      second!.startMs,
    );
  }
}

function checkRefused(op: IntruderOp, out: ViolationList, delayMs: number): void {
  if (op.api === 'ApiVersions') return; // the one request a SASL listener answers before the handshake
  const refusal = REFUSAL_OF[op.api];
  if (!op.outcome.ok && op.outcome.answered && op.outcome.error === refusal && op.endMs - op.startMs < delayMs) {
    out.add(
      AUTH_REFUSED,
      RUN_WIDE,
      'a refusal came before the failed-authentication delay',
      null,
      `${op.client} (${op.intruder}) ${op.api} at node ${op.node} was refused ${Math.round(op.endMs - op.startMs)} ms after it began, before connection.failed.authentication.delay.ms (${Math.round(delayMs * 10) / 10} ms on the fastest broker clock)`,
      op.startMs,
    );
  }
  if (!op.outcome.ok && (!op.outcome.answered || op.outcome.error === refusal)) return;
  const answer = op.outcome.ok ? 'it succeeded' : `answered ${op.outcome.error}, not ${refusal}`;
  out.add(
    AUTH_REFUSED,
    RUN_WIDE,
    'an intruder authenticated, or was refused with the wrong error',
    null,
    `${op.client} (${op.intruder}) tried ${op.api}${op.mechanism === null ? '' : ` with ${op.mechanism}`} at node ${op.node} on ${op.listener}: ${answer}`,
    op.startMs,
  );
}
