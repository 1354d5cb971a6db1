import { createHash, timingSafeEqual } from 'node:crypto';
import { FerryError } from '../../errors.ts';
import { AssertionError } from '../../util/assert.ts';
import { regressed } from '../../util/regressions.ts';
import { userPrincipal } from '../principal.ts';
import { invalidCredentials, SaslAuthenticationError, unexpectedToken, utf8Text, type SaslClient, type SaslServer, type SaslServerFactory, type SaslStep } from './mechanism.ts';

/**
 * SASL/PLAIN (RFC 4616) as Kafka's PlainSaslServer: `authzid NUL authcid NUL passwd`, checked
 * against a table of users (the JAAS `user_NAME="password"` options). The password travels in
 * clear: Kafka serves PLAIN over SASL_SSL in production.
 */
export const PLAIN_MECHANISM = 'PLAIN';

/**
 * The longest authzid, authcid or password taken, in bytes of UTF-8. RFC 4616 asks for at least
 * 255; a token is read whole into memory before the split, so this bounds it (PLAIN_TOKEN_BYTES_MAX).
 */
export const PLAIN_FIELD_BYTES_MAX = 1024;
/** Three fields and the two NULs between them. */
export const PLAIN_TOKEN_BYTES_MAX = 3 * PLAIN_FIELD_BYTES_MAX + 2;

/** PlainSaslServer's answers that Kafka sends to the client as they are (SaslAuthenticationException). */
export const PLAIN_INVALID_USER_OR_PASSWORD = 'Authentication failed: Invalid username or password';
export const PLAIN_AUTHZID_DIFFERS = 'Authentication failed: Client requested an authorization id that is different from username';
export const PLAIN_CREDENTIALS_UNVERIFIABLE = 'Authentication failed: credentials for user could not be verified';

/** Who may log in with PLAIN: each user's password, null for a user that does not exist. */
export interface PlainUsers {
  passwordOf(user: string): string | null | Promise<string | null>;
}

/** PlainUsers over a fixed table (the JAAS options' `user_NAME` entries: jaas.ts plainUsersOf). */
export function plainUsersFrom(passwords: ReadonlyMap<string, string>): PlainUsers {
  const table = new Map(passwords);
  return { passwordOf: (user) => table.get(user) ?? null };
}

export class PlainSaslServerFactory implements SaslServerFactory {
  readonly mechanism = PLAIN_MECHANISM;
  readonly #users: PlainUsers;

  constructor(users: PlainUsers) {
    this.#users = users;
  }

  create(): SaslServer {
    return new PlainSaslServer(this.#users);
  }
}

interface PlainFields {
  readonly authorizationId: string;
  readonly username: string;
  readonly password: string;
}

class PlainSaslServer implements SaslServer {
  readonly mechanism = PLAIN_MECHANISM;
  readonly #users: PlainUsers;
  #state: 'waiting' | 'evaluating' | 'complete' | 'failed' = 'waiting';

  constructor(users: PlainUsers) {
    this.#users = users;
  }

  async evaluate(token: Uint8Array): Promise<SaslStep> {
    if (this.#state !== 'waiting') throw unexpectedToken(PLAIN_MECHANISM, this.#state.toUpperCase());
    this.#state = 'evaluating';
    try {
      const step = await this.#authenticate(token);
      this.#state = 'complete';
      return step;
    } catch (error) {
      this.#state = 'failed';
      if (error instanceof SaslAuthenticationError || error instanceof AssertionError) throw error;
      throw invalidCredentials(PLAIN_MECHANISM, `unexpected failure: ${error instanceof Error ? error.message : String(error)}`, error);
    }
  }

  async #authenticate(token: Uint8Array): Promise<SaslStep> {
    const fields = parsePlainToken(token);
    let expected: string | null;
    try {
      expected = await this.#users.passwordOf(fields.username);
    } catch (error) {
      throw new SaslAuthenticationError(PLAIN_CREDENTIALS_UNVERIFIABLE, {
        detail: `the password of a PLAIN user could not be looked up: ${error instanceof Error ? error.message : String(error)}`,
        cause: error,
      });
    }
    // Kafka checks the password before the authzid: an authzid never tells whether a user exists.
    if (!passwordMatches(expected, fields.password) && !(regressed('plain-any-password') && expected !== null))
      throw new SaslAuthenticationError(PLAIN_INVALID_USER_OR_PASSWORD, { detail: expected === null ? 'PLAIN: unknown user' : 'PLAIN: wrong password' });
    if (fields.authorizationId !== '' && fields.authorizationId !== fields.username) throw new SaslAuthenticationError(PLAIN_AUTHZID_DIFFERS);
    return { done: true, response: new Uint8Array(0), principal: userPrincipal(fields.username), credentialExpiresAtMs: null };
  }
}

/** The three fields of a PLAIN token; SaslAuthenticationError (Kafka's generic answer) if malformed. */
export function parsePlainToken(token: Uint8Array): PlainFields {
  const malformed = (why: string): SaslAuthenticationError => invalidCredentials(PLAIN_MECHANISM, `malformed PLAIN token: ${why}`);
  if (token.length > PLAIN_TOKEN_BYTES_MAX) throw malformed(`${token.length} bytes, more than ${PLAIN_TOKEN_BYTES_MAX}`);
  const first = token.indexOf(0);
  const second = first < 0 ? -1 : token.indexOf(0, first + 1);
  // NUL is never part of a longer UTF-8 sequence, so splitting the bytes splits the text.
  if (second < 0 || token.indexOf(0, second + 1) >= 0) throw malformed('expected exactly two NUL separators');
  const parts = [token.subarray(0, first), token.subarray(first + 1, second), token.subarray(second + 1)];
  if (parts.some((part) => part.length > PLAIN_FIELD_BYTES_MAX)) throw malformed(`a field is longer than ${PLAIN_FIELD_BYTES_MAX} bytes`);
  const [authorizationId, username, password] = parts.map(utf8Text);
  if (authorizationId == null || username == null || password == null) throw malformed('not UTF-8');
  if (username === '') throw malformed('username not specified');
  if (password === '') throw malformed('password not specified');
  return { authorizationId, username, password };
}

/**
 * Whether `given` is the password `expected` (null: no such user), in time that depends on
 * neither: both are hashed to one length first, and an unknown user is compared too.
 */
function passwordMatches(expected: string | null, given: string): boolean {
  const givenDigest = createHash('sha256').update(given, 'utf8').digest();
  const expectedDigest = createHash('sha256')
    .update(expected ?? UNKNOWN_USER_PASSWORD, 'utf8')
    .digest();
  return timingSafeEqual(givenDigest, expectedDigest) && expected !== null;
}

/** What an unknown user's password is compared with (the result is thrown away). */
const UNKNOWN_USER_PASSWORD = '\0unknown user\0';

/** The client side of PLAIN: one token, then the server's empty answer. */
export class PlainSaslClient implements SaslClient {
  readonly mechanism = PLAIN_MECHANISM;
  readonly #token: Uint8Array;
  #state: 'new' | 'started' | 'complete' = 'new';

  /** `authorizationId` empty (Kafka's clients send none) or the username. */
  constructor(username: string, password: string, authorizationId = '') {
    for (const [name, value] of [
      ['username', username],
      ['password', password],
      ['authorization id', authorizationId],
    ] as const) {
      if (value.includes('\0')) throw new FerryError('InvalidConfig', `the PLAIN ${name} must not contain NUL`);
      if (Buffer.byteLength(value, 'utf8') > PLAIN_FIELD_BYTES_MAX) throw new FerryError('InvalidConfig', `the PLAIN ${name} is longer than ${PLAIN_FIELD_BYTES_MAX} bytes`);
    }
    if (username === '' || password === '') throw new FerryError('InvalidConfig', 'PLAIN needs a username and a password');
    this.#token = new TextEncoder().encode(`${authorizationId}\0${username}\0${password}`);
  }

  get complete(): boolean {
    return this.#state === 'complete';
  }

  start(): Uint8Array {
    if (this.#state !== 'new') throw new SaslAuthenticationError('PLAIN authentication already started');
    this.#state = 'started';
    return this.#token;
  }

  evaluate(_challenge: Uint8Array): Uint8Array | null {
    if (this.#state !== 'started') throw new SaslAuthenticationError(this.#state === 'new' ? 'PLAIN authentication not started' : 'PLAIN authentication already completed');
    this.#state = 'complete';
    return null;
  }
}
