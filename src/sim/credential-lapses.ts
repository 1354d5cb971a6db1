import type { History } from './history.ts';

/** A request that never left its client: it changed nothing. */
const NOT_SENT = 'not-sent';

/** A span in which a client may have held no credential its brokers take. */
export interface CredentialLapse {
  readonly fromMs: number;
  /** The start of the client's first authentication that succeeded after the change; Infinity: none did. */
  readonly toMs: number;
}

/**
 * When each client may have been unable to log in because its user's SCRAM credential was changed
 * or deleted (issue 25): from the change's start until the client next authenticated, a broker may
 * refuse its every connection (unknown user, or a password it no longer holds), so requests it
 * meant to send are 'not-sent' on a partition that works. auth-refused and credential-standing
 * judge those refusals; availability invariants leave such attempts alone. Only a change of a
 * mechanism the client logs in with (any, for a client the history shows no login of).
 */
export function credentialLapses(history: History): ReadonlyMap<string, readonly CredentialLapse[]> {
  const clientsOf = new Map<string, string[]>();
  for (const [client, user] of Object.entries(history.security?.users ?? {})) clientsOf.set(user, [...(clientsOf.get(user) ?? []), client]);
  // A client logs in with one mechanism (workload.ts draws it once): a change of another leaves its credential standing.
  const mechanismsOf = new Map<string, Set<string>>();
  for (const op of history.ops) if (op.kind === 'authenticate') mechanismsOf.set(op.client, (mechanismsOf.get(op.client) ?? new Set<string>()).add(op.mechanism));
  const lapses = new Map<string, CredentialLapse[]>();
  for (const change of history.ops) {
    if (change.kind !== 'alter-scram' || (!change.outcome.ok && change.outcome.error === NOT_SENT)) continue;
    for (const client of clientsOf.get(change.user) ?? []) {
      const mechanisms = mechanismsOf.get(client);
      if (mechanisms !== undefined && !mechanisms.has(change.mechanism)) continue;
      const relogin = history.ops.find((op) => op.kind === 'authenticate' && op.client === client && op.outcome.ok && op.startMs >= change.endMs);
      lapses.set(client, [...(lapses.get(client) ?? []), { fromMs: change.startMs, toMs: relogin?.startMs ?? Infinity }]);
    }
  }
  return lapses;
}

/** Whether `client` may have held no working credential at `atMs`. */
export function inCredentialLapse(lapses: ReadonlyMap<string, readonly CredentialLapse[]>, client: string, atMs: number): boolean {
  return lapses.get(client)?.some((lapse) => atMs >= lapse.fromMs && atMs < lapse.toMs) ?? false;
}
