/**
 * A simulated client's SASL exchange (issue 13, docs/security.md [A2]-[A5]), driven over one
 * connection: SaslHandshake v1 then SaslAuthenticate until the mechanism completes (and, SCRAM,
 * the server proved itself), or SaslHandshake v0 then the tokens as bare frames (KIP-43's first
 * form, for old clients: no session lifetime, no re-authentication). The mechanisms are the
 * broker's own clients (PlainSaslClient, ScramSaslClient); SCRAM's nonce comes from the seed, since
 * real randomness would make the messages (not the run's course: no latency depends on bytes)
 * differ between two runs of a seed.
 */
import { ErrorCode } from '../../protocol/error-codes.ts';
import { PLAIN_MECHANISM, PlainSaslClient } from '../../security/sasl/plain.ts';
import { SaslAuthenticationError, type SaslClient } from '../../security/sasl/mechanism.ts';
import { ScramSaslClient } from '../../security/sasl/scram-client.ts';
import { scramMechanismNamed } from '../../security/scram/mechanism.ts';
import type { SeededRandom } from '../../util/random.ts';
import type { Outcome } from '../history.ts';
import type { ClientApi } from './api.ts';
import type { Reply } from './connection.ts';
import { answeredOutcome, unansweredOutcome } from './outcome.ts';
import { saslAuthenticateApi, saslHandshakeApi, saslHandshakeV0Api } from './wire-security.ts';

/** Who a client is and how it proves it. */
export interface ClientSasl {
  /** PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512. */
  readonly mechanism: string;
  readonly username: string;
  /** Read at each exchange: a credential may change during a run (issue 25), and the client then learns the new one. */
  readonly password: string;
  /** Which of the user's credentials `password` is (the history's AuthenticateOp.credential); absent: 0. */
  readonly credential?: number;
  /** SaslHandshake v0 and bare tokens instead of v1 and SaslAuthenticate. */
  readonly bareTokens: boolean;
  /** Draws SCRAM nonces and when, within a session's lifetime, it re-authenticates. */
  readonly random: SeededRandom;
}

/** What one exchange needs of a connection: requests answered by correlation id, and bare token frames. */
export interface SaslChannel {
  send<Request, Response>(api: ClientApi<Request, Response>, request: Request): Promise<Reply<Response>>;
  /** Writes `token` as a bare size-prefixed frame and waits for the next frame, read bare; null when none comes. */
  exchangeBareToken(token: Uint8Array): Promise<Uint8Array | null>;
}

/** How an exchange ended. */
export interface SaslResult {
  readonly outcome: Outcome;
  /** session_lifetime_ms answered (0: none, or SaslHandshake v0). */
  readonly sessionLifetimeMs: number;
  /** The error message the broker answered with, when it refused (auth-refused compares them). */
  readonly errorMessage: string | null;
  /** The credential the exchange used (ClientSasl.credential when it began). */
  readonly credential: number;
}

/** Characters of a SCRAM client nonce (base64 of 24 bytes, as the broker's own client draws). */
const SCRAM_NONCE_CHARS = 32;
const NONCE_ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/';
/** Round trips of one exchange after the handshake, at most (SCRAM takes two): more means a broken broker. */
const ROUND_TRIPS_MAX = 4;
/** The error a client records when the broker's answer fails its own checks (SCRAM's server signature). */
export const SERVER_PROOF_REFUSED = 'SERVER_PROOF_REFUSED';
/** Kafka's clients re-authenticate between 85% and 95% of the session's lifetime (KIP-368). */
const REAUTHENTICATE_AT_MIN = 0.85;
const REAUTHENTICATE_AT_SPREAD = 0.1;

/** A fresh client side of `sasl`'s mechanism (SCRAM with a seeded nonce). */
export function saslClientOf(sasl: Pick<ClientSasl, 'mechanism' | 'username' | 'password' | 'random'>): SaslClient {
  if (sasl.mechanism === PLAIN_MECHANISM) return new PlainSaslClient(sasl.username, sasl.password);
  const scram = scramMechanismNamed(sasl.mechanism);
  if (scram === null) throw new Error(`the simulated clients speak PLAIN and SCRAM, not ${sasl.mechanism}`);
  return new ScramSaslClient(scram, sasl.username, sasl.password, { nonce: seededNonce(sasl.random) });
}

export function seededNonce(random: SeededRandom): string {
  let nonce = '';
  for (let i = 0; i < SCRAM_NONCE_CHARS; i++) nonce += NONCE_ALPHABET[random.nextInt(NONCE_ALPHABET.length)];
  return nonce;
}

/** When to re-authenticate, from the session's start: a seeded point late in its lifetime. */
export function reauthenticateAfterMs(sasl: ClientSasl, sessionLifetimeMs: number): number {
  return Math.floor(sessionLifetimeMs * (REAUTHENTICATE_AT_MIN + sasl.random.next() * REAUTHENTICATE_AT_SPREAD));
}

/** One exchange: the handshake, then the tokens until the mechanism completes. Never throws. */
export async function authenticate(channel: SaslChannel, sasl: ClientSasl, client: SaslClient = saslClientOf(sasl)): Promise<SaslResult> {
  const credential = sasl.credential ?? 0;
  const handshake = await channel.send(sasl.bareTokens ? saslHandshakeV0Api : saslHandshakeApi, { mechanism: client.mechanism });
  if (!handshake.answered) return failed(credential, unansweredOutcome(handshake.error));
  if (handshake.response.errorCode !== ErrorCode.NONE) return failed(credential, answeredOutcome(handshake.response.errorCode));
  try {
    return sasl.bareTokens ? await bareExchange(channel, client, credential) : await framedExchange(channel, client, credential);
  } catch (error) {
    if (!(error instanceof SaslAuthenticationError)) throw error;
    return failed(credential, { ok: false, error: SERVER_PROOF_REFUSED, answered: true });
  }
}

async function framedExchange(channel: SaslChannel, client: SaslClient, credential: number): Promise<SaslResult> {
  let token: Uint8Array | null = client.start();
  for (let round = 0; token !== null; round++) {
    if (round >= ROUND_TRIPS_MAX) return failed(credential, { ok: false, error: SERVER_PROOF_REFUSED, answered: true });
    const reply = await channel.send(saslAuthenticateApi, { authBytes: token });
    if (!reply.answered) return failed(credential, unansweredOutcome(reply.error));
    const { errorCode, errorMessage, authBytes, sessionLifetimeMs } = reply.response;
    if (errorCode !== ErrorCode.NONE) return failed(credential, answeredOutcome(errorCode), errorMessage);
    token = client.evaluate(authBytes);
    if (token === null) return { outcome: { ok: true }, sessionLifetimeMs: Number(sessionLifetimeMs ?? 0), errorMessage: null, credential };
  }
  return failed(credential, { ok: false, error: SERVER_PROOF_REFUSED, answered: true });
}

/** [A4] A refused bare token gets no answer: the broker closes the connection. */
async function bareExchange(channel: SaslChannel, client: SaslClient, credential: number): Promise<SaslResult> {
  let token: Uint8Array | null = client.start();
  for (let round = 0; token !== null; round++) {
    if (round >= ROUND_TRIPS_MAX) return failed(credential, { ok: false, error: SERVER_PROOF_REFUSED, answered: true });
    const answer = await channel.exchangeBareToken(token);
    if (answer === null) return failed(credential, unansweredOutcome('disconnected'));
    token = client.evaluate(answer);
  }
  return { outcome: { ok: true }, sessionLifetimeMs: 0, errorMessage: null, credential };
}

function failed(credential: number, outcome: Outcome, errorMessage: string | null = null): SaslResult {
  return { outcome, sessionLifetimeMs: 0, errorMessage, credential };
}
