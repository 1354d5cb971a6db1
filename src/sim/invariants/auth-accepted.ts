import type { HistoryIndex } from '../history-index.ts';
import type { ViolationList } from '../violation.ts';

export const AUTH_ACCEPTED = 'auth-accepted';

/**
 * auth-accepted (issue 13): a legitimate client's credentials are good everywhere, always (the
 * SCRAM credentials were written before any broker started; PLAIN's table never changes), so
 * every SASL exchange of one that the broker answered succeeded, its first and each
 * re-authentication (KIP-368) alike, and the broker proved itself (SCRAM's server signature). An
 * exchange that got no answer (a broker gone, a connection cut) is not judged.
 */
export function checkAuthAccepted(index: HistoryIndex, out: ViolationList): void {
  for (const op of index.history.ops) {
    if (op.kind !== 'authenticate' || op.outcome.ok || !op.outcome.answered) continue;
    const what = op.reauthentication ? 'a re-authentication' : 'an authentication';
    out.add(
      AUTH_ACCEPTED,
      { topic: '', incarnation: 0, partition: -1 },
      'a legitimate authentication was refused',
      null,
      `${what} of ${op.client} with ${op.mechanism} (SaslHandshake v${op.handshakeVersion}) at node ${op.node} was answered ${op.outcome.error}`,
      op.startMs,
    );
  }
}
