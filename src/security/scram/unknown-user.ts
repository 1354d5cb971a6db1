import { createHmac } from 'node:crypto';
import { assert } from '../../util/assert.ts';
import { SCRAM_SALT_BYTES_DEFAULT, type ScramCredential } from './credential.ts';
import { SCRAM_ITERATIONS_DEFAULT, type ScramMechanism } from './mechanism.ts';

/**
 * The credential a SCRAM server pretends an unknown user has, so that the exchange with an
 * unknown user looks like the exchange with a known user and a wrong password: the same
 * server-first message shape, a salt that is the same on every try and every broker (derived
 * from the user name and a secret the cluster's brokers share), the same work on the final
 * message, and the same refusal. Kafka itself refuses an unknown user at the first message.
 */

/** A shorter secret would let someone who guesses it tell fake salts from real ones. */
export const UNKNOWN_USER_SECRET_BYTES_MIN = 16;
/** What an unknown user appears to have: the count most real credentials have (Kafka's default). */
export const UNKNOWN_USER_ITERATIONS = SCRAM_ITERATIONS_DEFAULT;

export function unknownUserCredential(mechanism: ScramMechanism, user: string, secret: Uint8Array): ScramCredential {
  assert(secret.length >= UNKNOWN_USER_SECRET_BYTES_MIN, `the unknown-user secret has ${secret.length} bytes, fewer than ${UNKNOWN_USER_SECRET_BYTES_MIN}`);
  const derive = (purpose: string, bytes: number): Uint8Array => {
    const out = new Uint8Array(bytes);
    // Enough HMAC-SHA-512 blocks for `bytes`, each bound to the purpose, mechanism and user.
    for (let block = 0, at = 0; at < bytes; block++) {
      const digest = createHmac('sha512', secret).update(`${purpose}\0${mechanism.name}\0${block}\0`).update(user, 'utf8').digest();
      out.set(digest.subarray(0, Math.min(digest.length, bytes - at)), at);
      at += digest.length;
    }
    return out;
  };
  return {
    mechanism: mechanism.name,
    salt: derive('salt', SCRAM_SALT_BYTES_DEFAULT),
    iterations: UNKNOWN_USER_ITERATIONS,
    storedKey: derive('stored key', mechanism.keyBytes),
    serverKey: derive('server key', mechanism.keyBytes),
  };
}
