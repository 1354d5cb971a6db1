import { randomBytes, timingSafeEqual } from 'node:crypto';
import { assert, AssertionError } from '../../util/assert.ts';
import { userPrincipal } from '../principal.ts';
import { hash, hmac, wellFormedCredential, xor, type ScramCredential, type ScramCredentialLookup } from '../scram/credential.ts';
import {
  formatServerFinal,
  formatServerFirst,
  parseClientFinal,
  parseClientFirst,
  SCRAM_MESSAGE_BYTES_MAX,
  SCRAM_NONCE_CHARS_MAX,
  ScramFormatError,
  type ClientFirstMessage,
} from '../scram/messages.ts';
import type { ScramMechanism } from '../scram/mechanism.ts';
import { unknownUserCredential } from '../scram/unknown-user.ts';
import { invalidCredentials, SaslAuthenticationError, unexpectedToken, utf8Text, type SaslServer, type SaslServerFactory, type SaslStep } from './mechanism.ts';

/**
 * The server side of SCRAM-SHA-256 and SCRAM-SHA-512 (RFC 5802, RFC 7677) as Kafka's
 * ScramSaslServer: two tokens in (client-first, client-final), two out (server-first,
 * server-final). Differences from Kafka, each stricter: an unknown user is refused at the final
 * message with the answer a wrong password gets (no user enumeration: unknown-user.ts); the
 * client-final's channel binding `c=` must be the client-first's gs2 header; a mandatory
 * extension `m=` is refused (RFC 5802 5.1); delegation tokens (`tokenauth=true`) are refused.
 */

/** Kafka's answer (a SaslAuthenticationException, sent as it is) when `a=` names another user. */
export const SCRAM_AUTHZID_DIFFERS = 'Authentication failed: Client requested an authorization id that is different from username';

/** Random bytes in a server nonce (base64 in the message): Kafka uses 130 random bits. */
export const SCRAM_SERVER_NONCE_BYTES = 24;

export interface ScramSaslServerOptions {
  readonly credentials: ScramCredentialLookup;
  /**
   * A secret every broker of the cluster shares (ScramCredentialStore.unknownUserSecret), from
   * which an unknown user's fake salt is derived: the same user gets the same salt everywhere.
   */
  readonly unknownUserSecret: Uint8Array;
  /** Server nonces (tests pin RFC vectors with it); default SCRAM_SERVER_NONCE_BYTES random bytes. */
  readonly nonce?: () => string;
}

export class ScramSaslServerFactory implements SaslServerFactory {
  readonly mechanism: string;
  readonly #scram: ScramMechanism;
  readonly #options: ScramSaslServerOptions;

  constructor(mechanism: ScramMechanism, options: ScramSaslServerOptions) {
    this.mechanism = mechanism.name;
    this.#scram = mechanism;
    this.#options = options;
  }

  create(): SaslServer {
    return new ScramSaslServer(this.#scram, this.#options);
  }
}

/** What the first exchange left for the second. */
interface Pending {
  readonly clientFirst: ClientFirstMessage;
  readonly serverFirst: string;
  readonly nonce: string;
  readonly credential: ScramCredential;
  /** False when `credential` is an unknown user's fake: the proof is checked, then refused anyway. */
  readonly known: boolean;
}

type State = 'RECEIVE_CLIENT_FIRST_MESSAGE' | 'RECEIVE_CLIENT_FINAL_MESSAGE' | 'EVALUATING' | 'COMPLETE' | 'FAILED';

class ScramSaslServer implements SaslServer {
  readonly mechanism: string;
  readonly #scram: ScramMechanism;
  readonly #options: ScramSaslServerOptions;
  #state: State = 'RECEIVE_CLIENT_FIRST_MESSAGE';
  #pending: Pending | null = null;

  constructor(mechanism: ScramMechanism, options: ScramSaslServerOptions) {
    this.mechanism = mechanism.name;
    this.#scram = mechanism;
    this.#options = options;
  }

  async evaluate(token: Uint8Array): Promise<SaslStep> {
    const state = this.#state;
    if (state !== 'RECEIVE_CLIENT_FIRST_MESSAGE' && state !== 'RECEIVE_CLIENT_FINAL_MESSAGE') throw unexpectedToken(this.mechanism, state);
    this.#state = 'EVALUATING';
    try {
      const text = this.#text(token);
      if (state === 'RECEIVE_CLIENT_FIRST_MESSAGE') {
        const challenge = await this.#clientFirst(text);
        this.#state = 'RECEIVE_CLIENT_FINAL_MESSAGE';
        return { done: false, challenge };
      }
      const step = this.#clientFinal(text);
      this.#state = 'COMPLETE';
      return step;
    } catch (error) {
      this.#state = 'FAILED';
      this.#pending = null;
      if (error instanceof SaslAuthenticationError || error instanceof AssertionError) throw error;
      if (error instanceof ScramFormatError) throw invalidCredentials(this.mechanism, `${this.mechanism}: ${error.message}`);
      throw invalidCredentials(this.mechanism, `${this.mechanism}: unexpected failure: ${error instanceof Error ? error.message : String(error)}`, error);
    }
  }

  #text(token: Uint8Array): string {
    if (token.length > SCRAM_MESSAGE_BYTES_MAX) throw new ScramFormatError(`a token of ${token.length} bytes, more than ${SCRAM_MESSAGE_BYTES_MAX}`);
    const text = utf8Text(token);
    if (text === null) throw new ScramFormatError('a token that is not UTF-8');
    return text;
  }

  async #clientFirst(text: string): Promise<Uint8Array> {
    const clientFirst = parseClientFirst(text);
    const { username } = clientFirst;
    // Judged on the message alone, before any lookup: it tells nothing about the user.
    if (clientFirst.authorizationId !== '' && clientFirst.authorizationId !== username) throw new SaslAuthenticationError(SCRAM_AUTHZID_DIFFERS);
    if (clientFirst.extensions.get('tokenauth')?.toLowerCase() === 'true') throw invalidCredentials(this.mechanism, `${this.mechanism}: delegation tokens (the tokenauth extension) are not supported`);
    let found: ScramCredential | null;
    try {
      found = await this.#options.credentials.lookup(username, this.mechanism);
    } catch (error) {
      throw invalidCredentials(this.mechanism, `${this.mechanism}: Credentials could not be obtained: ${error instanceof Error ? error.message : String(error)}`, error);
    }
    // Too few iterations (Kafka refuses those at login too) or a damaged record: as if unknown.
    // The fake is derived for every user, so that the first answer takes as long either way.
    const fake = unknownUserCredential(this.#scram, username, this.#options.unknownUserSecret);
    const known = found !== null && wellFormedCredential(this.#scram, found);
    const credential = known ? found! : fake;
    const nonce = clientFirst.nonce + this.#serverNonce();
    const serverFirst = formatServerFirst(nonce, credential.salt, credential.iterations);
    this.#pending = { clientFirst, serverFirst, nonce, credential, known };
    return new TextEncoder().encode(serverFirst);
  }

  #clientFinal(text: string): SaslStep {
    const pending = this.#pending;
    assert(pending !== null, 'a client-final message follows a server-first message');
    this.#pending = null;
    const clientFinal = parseClientFinal(text);
    if (clientFinal.channelBinding !== Buffer.from(pending.clientFirst.gs2Header, 'utf8').toString('base64')) throw new ScramFormatError('the channel binding "c=" is not the client-first gs2 header');
    // Kafka's ScramSaslServer checks endsWith, not equality: librdkafka (2.0.2 at least) sends its
    // own nonce again before the server-first nonce. The proof still covers the text it sent.
    if (!clientFinal.nonce.endsWith(pending.nonce)) throw new ScramFormatError('Invalid client nonce in the final client message.');
    if (clientFinal.proof.length !== this.#scram.keyBytes) throw new ScramFormatError(`a proof of ${clientFinal.proof.length} bytes, not ${this.#scram.keyBytes}`);
    const { credential } = pending;
    const authMessage = `${pending.clientFirst.bare},${pending.serverFirst},${clientFinal.withoutProof}`;
    const clientSignature = hmac(this.#scram, credential.storedKey, authMessage);
    const clientKey = xor(clientFinal.proof, clientSignature);
    const proven = timingSafeEqual(hash(this.#scram, clientKey), credential.storedKey);
    if (!proven || !pending.known)
      throw invalidCredentials(this.mechanism, `${this.mechanism}: ${pending.known ? 'Invalid client credentials' : 'unknown user (or no credential for this mechanism)'}`);
    const serverFinal = formatServerFinal(hmac(this.#scram, credential.serverKey, authMessage));
    return { done: true, response: new TextEncoder().encode(serverFinal), principal: userPrincipal(pending.clientFirst.username), credentialExpiresAtMs: null };
  }

  #serverNonce(): string {
    const nonce = this.#options.nonce?.() ?? randomBytes(SCRAM_SERVER_NONCE_BYTES).toString('base64');
    assert(nonce.length > 0 && nonce.length <= SCRAM_NONCE_CHARS_MAX && /^[\x21-\x2b\x2d-\x7e]+$/.test(nonce), 'a server nonce is printable ASCII without ","');
    return nonce;
  }
}
