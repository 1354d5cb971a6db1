import { randomBytes, timingSafeEqual } from 'node:crypto';
import { FerryError } from '../../errors.ts';
import { clientKeyOf, hash, hmac, saltedPasswordOf, serverKeyOf, xor } from '../scram/credential.ts';
import { formatClientFinalWithoutProof, formatClientFirst, parseServerFinal, parseServerFirst, SCRAM_MESSAGE_BYTES_MAX, ScramFormatError } from '../scram/messages.ts';
import type { ScramMechanism } from '../scram/mechanism.ts';
import { SaslAuthenticationError, utf8Text, type SaslClient } from './mechanism.ts';

/**
 * The client side of SCRAM (a broker logging in to another), as Kafka's ScramSaslClient:
 * client-first, then client-final with the proof, then the server's signature checked. It refuses
 * a server nonce that does not extend its own, fewer iterations than the mechanism's minimum (a
 * downgrade) and more than its maximum (a server making it spin).
 */

/** Random bytes in a client nonce (base64 in the message). */
export const SCRAM_CLIENT_NONCE_BYTES = 24;
/** The gs2 header of a client without channel binding or authzid: `c=biws` in the final message. */
const GS2_HEADER = 'n,,';

/**
 * Salted passwords a process keeps (each 32-64 bytes): a client re-authenticating (KIP-368) to a
 * server that answers the same salt and iterations need not run PBKDF2 (4096+ HMACs) again. Past
 * it the oldest goes. Key material no worse than the password the client holds anyway.
 */
const SALTED_PASSWORDS_CACHED_MAX = 64;
const saltedPasswords = new Map<string, Uint8Array>();

/** saltedPasswordOf, remembered by mechanism, password, salt and iterations (SALTED_PASSWORDS_CACHED_MAX). */
function cachedSaltedPassword(mechanism: ScramMechanism, password: string, salt: Uint8Array, iterations: number): Uint8Array {
  const key = `${mechanism.name}\u0000${iterations}\u0000${Buffer.from(salt).toString('base64')}\u0000${password}`;
  let salted = saltedPasswords.get(key);
  if (salted === undefined) {
    salted = saltedPasswordOf(mechanism, password, salt, iterations);
    if (saltedPasswords.size >= SALTED_PASSWORDS_CACHED_MAX) saltedPasswords.delete(saltedPasswords.keys().next().value!);
    saltedPasswords.set(key, salted);
  }
  return salted;
}

type State = 'SEND_CLIENT_FIRST_MESSAGE' | 'RECEIVE_SERVER_FIRST_MESSAGE' | 'RECEIVE_SERVER_FINAL_MESSAGE' | 'COMPLETE' | 'FAILED';

export class ScramSaslClient implements SaslClient {
  readonly mechanism: string;
  readonly #scram: ScramMechanism;
  readonly #username: string;
  readonly #password: string;
  readonly #clientNonce: string;
  #state: State = 'SEND_CLIENT_FIRST_MESSAGE';
  #clientFirstBare = '';
  #expectedServerSignature: Uint8Array | null = null;

  /** `nonce` pins the client nonce (RFC vectors in tests); default SCRAM_CLIENT_NONCE_BYTES random bytes. */
  constructor(mechanism: ScramMechanism, username: string, password: string, options?: { nonce?: string }) {
    if (username === '') throw new FerryError('InvalidConfig', `${mechanism.name} needs a username`);
    if (username.includes('\0') || password.includes('\0')) throw new FerryError('InvalidConfig', `the ${mechanism.name} username and password must not contain NUL`);
    this.mechanism = mechanism.name;
    this.#scram = mechanism;
    this.#username = username;
    this.#password = password;
    this.#clientNonce = options?.nonce ?? randomBytes(SCRAM_CLIENT_NONCE_BYTES).toString('base64');
  }

  get complete(): boolean {
    return this.#state === 'COMPLETE';
  }

  start(): Uint8Array {
    if (this.#state !== 'SEND_CLIENT_FIRST_MESSAGE') throw this.#fail(`Unexpected challenge in Sasl client state ${this.#state}`);
    const clientFirst = formatClientFirst(this.#username, this.#clientNonce);
    this.#clientFirstBare = clientFirst.slice(GS2_HEADER.length);
    this.#state = 'RECEIVE_SERVER_FIRST_MESSAGE';
    return new TextEncoder().encode(clientFirst);
  }

  evaluate(challenge: Uint8Array): Uint8Array | null {
    try {
      switch (this.#state) {
        case 'RECEIVE_SERVER_FIRST_MESSAGE': {
          const clientFinal = this.#serverFirst(this.#text(challenge));
          this.#state = 'RECEIVE_SERVER_FINAL_MESSAGE';
          return clientFinal;
        }
        case 'RECEIVE_SERVER_FINAL_MESSAGE':
          this.#serverFinal(this.#text(challenge));
          this.#state = 'COMPLETE';
          return null;
        default:
          throw new SaslAuthenticationError(`Unexpected challenge in Sasl client state ${this.#state}`);
      }
    } catch (error) {
      if (error instanceof SaslAuthenticationError) throw this.#fail(error.message);
      if (error instanceof ScramFormatError) throw this.#fail(`Invalid SCRAM server message: ${error.message}`);
      throw error;
    }
  }

  #text(challenge: Uint8Array): string {
    if (challenge.length > SCRAM_MESSAGE_BYTES_MAX) throw new ScramFormatError(`${challenge.length} bytes, more than ${SCRAM_MESSAGE_BYTES_MAX}`);
    const text = utf8Text(challenge);
    if (text === null) throw new ScramFormatError('not UTF-8');
    return text;
  }

  #serverFirst(text: string): Uint8Array {
    const serverFirst = parseServerFirst(text);
    if (!serverFirst.nonce.startsWith(this.#clientNonce) || serverFirst.nonce.length === this.#clientNonce.length)
      throw new SaslAuthenticationError('Invalid server nonce: does not start with client nonce');
    const { iterations } = serverFirst;
    if (iterations < this.#scram.iterationsMin) throw new SaslAuthenticationError(`Requested iterations ${iterations} is less than the minimum ${this.#scram.iterationsMin} for ${this.mechanism}`);
    if (iterations > this.#scram.iterationsMax) throw new SaslAuthenticationError(`Requested iterations ${iterations} is more than the maximum ${this.#scram.iterationsMax} for ${this.mechanism}`);
    const saltedPassword = cachedSaltedPassword(this.#scram, this.#password, serverFirst.salt, iterations);
    const withoutProof = formatClientFinalWithoutProof(GS2_HEADER, serverFirst.nonce);
    const authMessage = `${this.#clientFirstBare},${serverFirst.text},${withoutProof}`;
    const clientKey = clientKeyOf(this.#scram, saltedPassword);
    const proof = xor(clientKey, hmac(this.#scram, hash(this.#scram, clientKey), authMessage));
    this.#expectedServerSignature = hmac(this.#scram, serverKeyOf(this.#scram, saltedPassword), authMessage);
    return new TextEncoder().encode(`${withoutProof},p=${Buffer.from(proof).toString('base64')}`);
  }

  #serverFinal(text: string): void {
    const serverFinal = parseServerFinal(text);
    if (serverFinal.error !== null) throw new SaslAuthenticationError(`Sasl authentication using ${this.mechanism} failed with error: ${serverFinal.error}`);
    const expected = this.#expectedServerSignature!;
    if (serverFinal.signature.length !== expected.length || !timingSafeEqual(serverFinal.signature, expected)) throw new SaslAuthenticationError('Invalid server signature in server final message');
  }

  #fail(message: string): SaslAuthenticationError {
    this.#state = 'FAILED';
    this.#expectedServerSignature = null;
    return new SaslAuthenticationError(message);
  }
}
