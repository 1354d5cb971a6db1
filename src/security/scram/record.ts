import { assert } from '../../util/assert.ts';
import type { ScramCredential } from './credential.ts';
import { SCRAM_MECHANISMS, scramMechanismNamed } from './mechanism.ts';

/**
 * A user's SCRAM control record (`security/scram-users/<encodeURIComponent(user)>`): the user's
 * credential per mechanism, never a password. A user whose last credential was deleted keeps a
 * record with no credentials (a delete is a compare-and-swap like any change: ControlStore has no
 * conditional delete, and an unconditional one could drop a credential another broker just set).
 */
export interface ScramUserRecord {
  readonly user: string;
  /** By mechanism name. */
  readonly credentials: Readonly<Record<string, StoredScramCredential>>;
}

export interface StoredScramCredential {
  readonly salt: string; // base64
  readonly iterations: number;
  readonly storedKey: string; // base64
  readonly serverKey: string; // base64
}

export function storedCredentialOf(credential: ScramCredential): StoredScramCredential {
  return {
    salt: Buffer.from(credential.salt).toString('base64'),
    iterations: credential.iterations,
    storedKey: Buffer.from(credential.storedKey).toString('base64'),
    serverKey: Buffer.from(credential.serverKey).toString('base64'),
  };
}

/**
 * The credentials of a record as read back, by mechanism name, each checked for its mechanism's
 * shape; null (with why) for a record that is not one (written by something else, or damaged).
 */
export function credentialsOfRecord(value: unknown, user: string): { credentials: Map<string, ScramCredential> } | { why: string } {
  if (typeof value !== 'object' || value === null) return { why: 'not an object' };
  const record = value as Partial<ScramUserRecord>;
  if (record.user !== user) return { why: 'its user is not the one its key names' };
  if (typeof record.credentials !== 'object' || record.credentials === null) return { why: 'no credentials object' };
  const credentials = new Map<string, ScramCredential>();
  for (const [name, stored] of Object.entries(record.credentials)) {
    const mechanism = scramMechanismNamed(name);
    if (mechanism === null) return { why: `an unknown mechanism ${JSON.stringify(name.slice(0, 32))}` };
    const credential = credentialOf(name, stored);
    if (credential === null || credential.storedKey.length !== mechanism.keyBytes || credential.serverKey.length !== mechanism.keyBytes) return { why: `a malformed ${name} credential` };
    credentials.set(name, credential);
  }
  return { credentials };
}

function credentialOf(mechanism: string, stored: unknown): ScramCredential | null {
  if (typeof stored !== 'object' || stored === null) return null;
  const { salt, iterations, storedKey, serverKey } = stored as Partial<StoredScramCredential>;
  if (typeof salt !== 'string' || typeof storedKey !== 'string' || typeof serverKey !== 'string') return null;
  if (typeof iterations !== 'number' || !Number.isSafeInteger(iterations) || iterations <= 0) return null;
  return { mechanism, salt: base64(salt), iterations, storedKey: base64(storedKey), serverKey: base64(serverKey) };
}

function base64(text: string): Uint8Array {
  return new Uint8Array(Buffer.from(text, 'base64'));
}

/** The record after `change`; mechanisms in Kafka's order so equal records are equal JSON. */
export function recordWith(user: string, credentials: ReadonlyMap<string, ScramCredential>): ScramUserRecord {
  const stored: Record<string, StoredScramCredential> = {};
  for (const mechanism of SCRAM_MECHANISMS) {
    const credential = credentials.get(mechanism.name);
    if (credential !== undefined) stored[mechanism.name] = storedCredentialOf(credential);
  }
  assert(Object.keys(stored).length === credentials.size, 'every credential of a record is of a known mechanism');
  return { user, credentials: stored };
}
