import { createHash, createHmac, pbkdf2, pbkdf2Sync, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import { FerryError } from '../../errors.ts';
import { assert } from '../../util/assert.ts';
import { SCRAM_ITERATIONS_DEFAULT, type ScramMechanism } from './mechanism.ts';

/**
 * A user's SCRAM credential for one mechanism, as Kafka's ScramCredential: what the server keeps
 * instead of the password (RFC 5802 section 3). StoredKey verifies the client's proof, ServerKey
 * signs the server's answer; neither lets anyone log in (they would need ClientKey).
 */
export interface ScramCredential {
  readonly mechanism: string;
  readonly salt: Uint8Array;
  readonly iterations: number;
  readonly storedKey: Uint8Array;
  readonly serverKey: Uint8Array;
}

/** Where a SCRAM server finds credentials: the ScramCredentialStore, or a fixed table in tests. */
export interface ScramCredentialLookup {
  lookup(user: string, mechanism: string): ScramCredential | null | Promise<ScramCredential | null>;
}

/** Random salt length of the credentials Ferry derives itself (Kafka's own are ~26 bytes). */
export const SCRAM_SALT_BYTES_DEFAULT = 32;

export function hmac(mechanism: ScramMechanism, key: Uint8Array, data: Uint8Array | string): Uint8Array {
  return createHmac(mechanism.hash, key).update(data).digest();
}

export function hash(mechanism: ScramMechanism, data: Uint8Array): Uint8Array {
  return createHash(mechanism.hash).update(data).digest();
}

export function xor(a: Uint8Array, b: Uint8Array): Uint8Array {
  assert(a.length === b.length, `xor of ${a.length} and ${b.length} bytes`);
  const out = new Uint8Array(a.length);
  for (let i = 0; i < a.length; i++) out[i] = a[i]! ^ b[i]!;
  return out;
}

/**
 * SaltedPassword := Hi(password, salt, i): PBKDF2 with the mechanism's HMAC and one block. Like
 * Kafka, the password is taken as its UTF-8 bytes, without SASLprep. Blocks the thread for
 * `iterations` HMACs (a client login, a test); scramCredentialFromPassword does it off the thread.
 */
export function saltedPasswordOf(mechanism: ScramMechanism, password: string, salt: Uint8Array, iterations: number): Uint8Array {
  return pbkdf2Sync(Buffer.from(password, 'utf8'), salt, iterations, mechanism.keyBytes, mechanism.hash);
}

const pbkdf2Async = promisify(pbkdf2);

/** ClientKey := HMAC(SaltedPassword, "Client Key"). */
export function clientKeyOf(mechanism: ScramMechanism, saltedPassword: Uint8Array): Uint8Array {
  return hmac(mechanism, saltedPassword, 'Client Key');
}

/** ServerKey := HMAC(SaltedPassword, "Server Key"). */
export function serverKeyOf(mechanism: ScramMechanism, saltedPassword: Uint8Array): Uint8Array {
  return hmac(mechanism, saltedPassword, 'Server Key');
}

/**
 * The credential of a salted password, as AlterUserScramCredentials sends it (the admin client
 * salts and hashes the password itself; ScramControlManager.finishUpsertion). No bounds checked:
 * the caller did (ScramCredentialStore.alter).
 */
export function scramCredentialFromSaltedPassword(mechanism: ScramMechanism, salt: Uint8Array, saltedPassword: Uint8Array, iterations: number): ScramCredential {
  return {
    mechanism: mechanism.name,
    salt: Uint8Array.from(salt),
    iterations,
    storedKey: hash(mechanism, clientKeyOf(mechanism, saltedPassword)),
    serverKey: serverKeyOf(mechanism, saltedPassword),
  };
}

/**
 * A new credential for a password (`ferry users add`): a random salt, then PBKDF2 off the thread.
 * InvalidArgument for iterations outside the mechanism's bounds (what AlterUserScramCredentials
 * would refuse).
 */
export async function scramCredentialFromPassword(
  mechanism: ScramMechanism,
  password: string,
  iterations = SCRAM_ITERATIONS_DEFAULT,
  salt: Uint8Array = randomBytes(SCRAM_SALT_BYTES_DEFAULT),
): Promise<ScramCredential> {
  if (!Number.isSafeInteger(iterations) || iterations < mechanism.iterationsMin || iterations > mechanism.iterationsMax) {
    throw new FerryError('InvalidArgument', `${mechanism.name} iterations must lie in ${mechanism.iterationsMin}..${mechanism.iterationsMax}, not ${iterations}`);
  }
  const saltedPassword = await pbkdf2Async(Buffer.from(password, 'utf8'), salt, iterations, mechanism.keyBytes, mechanism.hash);
  return scramCredentialFromSaltedPassword(mechanism, salt, saltedPassword, iterations);
}

/** Whether a credential has the shape its mechanism needs (a store record read back, a lookup's answer). */
export function wellFormedCredential(mechanism: ScramMechanism, credential: ScramCredential): boolean {
  return (
    credential.mechanism === mechanism.name &&
    credential.storedKey.length === mechanism.keyBytes &&
    credential.serverKey.length === mechanism.keyBytes &&
    Number.isSafeInteger(credential.iterations) &&
    credential.iterations >= mechanism.iterationsMin
  );
}
