/**
 * Kafka's KafkaPrincipal: who a connection is, as ACLs, quotas and logs name it (`User:alice`).
 * A connection that did not authenticate (PLAINTEXT, SSL without a client certificate) is
 * `User:ANONYMOUS`, as in Kafka.
 */
export interface KafkaPrincipal {
  /** Kafka's principal type: always `User` for the principals brokers build. */
  readonly type: string;
  readonly name: string;
}

/** Kafka's principal type of every authenticated or anonymous connection. */
export const USER_TYPE = 'User';
/** Kafka's principal of a connection that did not authenticate. */
export const ANONYMOUS: KafkaPrincipal = Object.freeze({ type: USER_TYPE, name: 'ANONYMOUS' });
/** ACLs' wildcard principal: `User:*` matches every user. */
export const WILDCARD_PRINCIPAL_TEXT = 'User:*';

export function userPrincipal(name: string): KafkaPrincipal {
  return { type: USER_TYPE, name };
}

/** `User:alice`: the form ACLs, super.users and logs use. */
export function principalText(principal: KafkaPrincipal): string {
  return `${principal.type}:${principal.name}`;
}

/** Parses `Type:name` (the name may hold colons: `User:CN=a,O=b` or `User:x:y`); null if there is no type. */
export function parsePrincipal(text: string): KafkaPrincipal | null {
  const colon = text.indexOf(':');
  if (colon <= 0) return null;
  return { type: text.slice(0, colon), name: text.slice(colon + 1) };
}

export function samePrincipal(a: KafkaPrincipal, b: KafkaPrincipal): boolean {
  return a.type === b.type && a.name === b.name;
}
