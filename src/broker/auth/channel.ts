import { ANONYMOUS, type KafkaPrincipal, principalText, samePrincipal, userPrincipal } from '../../security/principal.ts';
import { invalidCredentialsMessage, SaslAuthenticationError, type SaslServer } from '../../security/sasl/mechanism.ts';
import type { Session } from '../../security/session.ts';
import { distinguishedName } from '../../security/tls/ssl-principal.ts';
import type { Clock } from '../../util/clock.ts';
import { clientAddressOf, type NetSocket } from '../../util/network.ts';
import { logText } from '../../util/log-text.ts';
import { apiVersionsCodec } from '../apis/api-versions.ts';
import type { SaslAuthenticateRequest, SaslAuthenticateResponse } from '../apis/sasl-authenticate.ts';
import { saslAuthenticateCodec } from '../apis/sasl-authenticate.ts';
import type { SaslHandshakeRequest, SaslHandshakeResponse } from '../apis/sasl-handshake.ts';
import { saslHandshakeCodec } from '../apis/sasl-handshake.ts';
import { REQUEST_BYTES_MAX } from '../connection.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { ProtocolError } from '../../protocol/errors.ts';
import type { Router, SaslRequests } from '../router.ts';
import type { ResponseBuffers } from '../read-buffer-pool.ts';
import type { ListenerSecurity } from './listener-security.ts';

/** A name the client chose (a mechanism), for a log line: quoted, escaped, cut short (logText). */
function quoted(name: string): string {
  return `"${logText(name)}"`;
}

/** Whether an ApiVersions request frame is at a version the broker serves (its version follows the API key). */
function supportedApiVersions(frame: Uint8Array): boolean {
  if (frame.length < 4) return true;
  const version = new DataView(frame.buffer, frame.byteOffset, frame.length).getInt16(2);
  return version >= apiVersionsCodec.minVersion && version <= apiVersionsCodec.maxVersion;
}

/** Kafka's answer to SaslAuthenticate on a connection that is not in an exchange. */
const AUTHENTICATE_AFTER_SUCCESS_MESSAGE = 'SaslAuthenticate request received after successful authentication';
const NO_BYTES = new Uint8Array(0);
/** SaslHandshake v0: the tokens that follow travel as bare frames (KIP-43's first form); v1: inside SaslAuthenticate. */
const FRAMED_TOKENS_VERSION = 1;
/** Kafka's MIN_REAUTH_INTERVAL_ONE_SECOND_NANOS: a connection re-authenticates at most this often. */
const REAUTHENTICATION_INTERVAL_MS_MIN = 1_000;
/** SaslAuthenticate v1 carries session_lifetime_ms (KIP-368). */
const SESSION_LIFETIME_VERSION = 1;

/** What the channel reports: the broker counts and logs these (never a secret in `detail`). */
export interface AuthenticationEvents {
  authenticated(session: Session, reauthentication: boolean): void;
  failed(listener: string, mechanism: string | null, clientAddress: string, detail: string): void;
}

export interface ChannelOptions {
  readonly router: Router;
  readonly listener: ListenerSecurity;
  readonly socket: NetSocket;
  readonly clock: Clock;
  /** connection.failed.authentication.delay.ms. */
  readonly failedAuthenticationDelayMs: number;
  readonly events: AuthenticationEvents;
  /** Answers what is in hand, then ends the connection (Connection.endAfterResponses). */
  endAfterResponses(): void;
  /** Reads nothing more for `ms` (Connection.muteFor). */
  muteFor(ms: number): void;
}

/**
 * Where a SASL connection's exchange is (docs/security.md [A1]-[A6]):
 * - `handshake`: before SaslHandshake; one ApiVersions may come first;
 * - `bare-tokens` / `framed-tokens`: an exchange under way, its tokens bare (after SaslHandshake
 *   v0) or in SaslAuthenticate (v1);
 * - `authenticated`: requests flow; a SaslHandshake starts a re-authentication, whose tokens are
 *   `framed-tokens` with the session kept until it completes;
 * - `refused`: a failure was answered; nothing more is handled.
 */
type ExchangeState =
  | { readonly kind: 'handshake'; readonly apiVersionsAnswered: boolean }
  | { readonly kind: 'bare-tokens' | 'framed-tokens'; readonly server: SaslServer; readonly reauthentication: boolean }
  | { readonly kind: 'authenticated' }
  | { readonly kind: 'refused' };

/**
 * One client connection's security: who it is and what it may send before that is known. On a
 * PLAINTEXT or SSL listener the session exists from the start (ANONYMOUS, or the client
 * certificate's principal); on a SASL listener only ApiVersions, SaslHandshake and SaslAuthenticate
 * are taken until the exchange succeeds (Kafka's SaslServerAuthenticator), any other request
 * closes the connection, and frames are bounded by sasl.server.max.receive.size. A refusal is
 * answered after connection.failed.authentication.delay.ms and the connection then closed. KIP-368:
 * a session with a lifetime ends with it; a request after that closes the connection, unless it
 * is the SaslHandshake of a re-authentication (same mechanism, same principal).
 */
export class Channel implements SaslRequests {
  readonly #options: ChannelOptions;
  readonly #clientAddress: string;
  #state: ExchangeState;
  #session: Session;
  /** When the session ends (monotonic ms), or null when it does not (KIP-368). */
  #expiresAtMs: number | null = null;
  /** When the last re-authentication started (monotonic ms): the next may start a second later. */
  #reauthenticatedAtMs = Number.NEGATIVE_INFINITY;

  constructor(options: ChannelOptions) {
    this.#options = options;
    this.#clientAddress = clientAddressOf(options.socket.remoteAddress);
    this.#session = this.#sessionOf(ANONYMOUS, null);
    this.#state = options.listener.sasl === null ? { kind: 'authenticated' } : { kind: 'handshake', apiVersionsAnswered: false };
  }

  get session(): Session {
    return this.#session;
  }

  /**
   * A TLS listener's handshake completed: the client certificate, if any, must have verified (a
   * revoked or untrusted one ends the connection, as a failed handshake would) and, on an SSL
   * listener, becomes the principal. Returns false when the connection must close.
   */
  tlsEstablished(): boolean {
    const tls = this.#options.socket.tls;
    if (tls === undefined) return false;
    const certificate = tls.peerCertificate();
    if (certificate !== undefined && !tls.authorized) return this.#refuseTls(`client certificate refused: ${tls.authorizationError ?? 'not verified'}`);
    const mapper = this.#options.listener.sslPrincipal;
    if (mapper === null || certificate === undefined) return true;
    const dn = distinguishedName(certificate);
    const name = mapper.map(dn);
    if (name === null) return this.#refuseTls(`no ssl.principal.mapping.rules rule applies to ${dn}`);
    this.#session = this.#sessionOf(userPrincipal(name), null);
    this.#options.events.authenticated(this.#session, false);
    return true;
  }

  /** Whether the client's frames count against the broker's request budget: not before a SASL client authenticated ([A1]; Connection's `pooled`). */
  framesPooled(): boolean {
    return this.#options.listener.sasl === null || this.#state.kind === 'authenticated';
  }

  /** The largest frame the connection takes now: sasl.server.max.receive.size until a SASL client authenticated. */
  frameBytesMax(): number {
    const sasl = this.#options.listener.sasl;
    return sasl !== null && this.#state.kind !== 'authenticated' ? sasl.receiveBytesMax : REQUEST_BYTES_MAX;
  }

  /** One request frame (or bare token) in, its answer out (reading into `responseBuffers`, RB1); a throw closes the connection. */
  async handle(frame: Uint8Array, responseBuffers?: ResponseBuffers): Promise<Uint8Array[] | null> {
    const state = this.#state;
    if (state.kind === 'bare-tokens') return this.#bareToken(state.server, frame);
    if (state.kind === 'refused') return null;
    const apiKey = frame.length >= 2 ? (frame[0]! << 8) | frame[1]! : -1;
    if (state.kind === 'authenticated') {
      if (this.#expired() && apiKey !== saslHandshakeCodec.key)
        throw new ProtocolError(`the session of ${logText(principalText(this.#session.principal))} expired (connections.max.reauth.ms, or its credential's expiry) without a re-authentication`, 0);
      return this.#options.router.handle(frame, this, responseBuffers);
    }
    const allowed = state.kind === 'handshake' ? apiKey === saslHandshakeCodec.key || (apiKey === apiVersionsCodec.key && !state.apiVersionsAnswered) : apiKey === saslAuthenticateCodec.key;
    const unexpected = `Unexpected Kafka request of type ${this.#options.router.apiName(apiKey)} during SASL ${state.kind === 'handshake' ? 'handshake' : 'authentication'}`;
    if (!allowed && state.kind === 'framed-tokens') return this.#unexpectedDuringExchange(state.server.mechanism, unexpected, frame);
    if (!allowed) throw new ProtocolError(unexpected, 0);
    // KIP-511: an ApiVersions at a version the broker lacks is answered UNSUPPORTED_VERSION and the
    // client retries lower (a Kafka 4 client sends v4): only a supported one uses up the one allowed.
    if (apiKey === apiVersionsCodec.key && supportedApiVersions(frame)) this.#state = { kind: 'handshake', apiVersionsAnswered: true };
    return this.#options.router.handle(frame, this);
  }

  // Read by the router for the handlers (ChannelContext).
  get peer(): string {
    return this.#clientAddress;
  }

  get sasl(): SaslRequests {
    return this;
  }

  mute(ms: number): void {
    this.#options.muteFor(ms);
  }

  /** SaslHandshake: [A2] picks the mechanism (or, authenticated, starts a re-authentication [A5]). */
  async handshake(request: SaslHandshakeRequest, version: number): Promise<SaslHandshakeResponse> {
    const sasl = this.#options.listener.sasl;
    if (sasl === null) return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] };
    const mechanisms = [...sasl.mechanisms.keys()];
    const reauthentication = this.#state.kind === 'authenticated';
    // KIP-368, as Kafka's KafkaChannel.maybeBeginServerReauthentication: a session that never ends
    // has nothing to re-authenticate, and one re-authentication a second is the most (each costs an
    // exchange: a client looping on it would spend the broker's time); such a SaslHandshake is
    // answered as on an authenticated connection, and the connection goes on.
    if (reauthentication && (this.#expiresAtMs === null || this.#options.clock.monotonicMs() - this.#reauthenticatedAtMs < REAUTHENTICATION_INTERVAL_MS_MIN))
      return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, mechanisms: [] };
    if (reauthentication && version < FRAMED_TOKENS_VERSION) throw new ProtocolError('a re-authentication needs SaslHandshake v1 or later (KIP-368)', 0);
    if (reauthentication) this.#reauthenticatedAtMs = this.#options.clock.monotonicMs();
    const factory = sasl.mechanisms.get(request.mechanism);
    const sameAsBefore = !reauthentication || request.mechanism === this.#session.saslMechanism;
    if (factory === undefined || !sameAsBefore) {
      const why =
        factory === undefined
          ? `mechanism ${quoted(request.mechanism)} is not enabled (${mechanisms.join(', ')})`
          : `re-authentication changed the mechanism from ${this.#session.saslMechanism} to ${request.mechanism}`;
      await this.#refuse(request.mechanism, why);
      return { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, mechanisms };
    }
    this.#state = { kind: version >= FRAMED_TOKENS_VERSION ? 'framed-tokens' : 'bare-tokens', server: factory.create(), reauthentication };
    return { errorCode: ErrorCode.NONE, mechanisms };
  }

  /** SaslAuthenticate: [A3] one token of the exchange under way. */
  async authenticate(request: SaslAuthenticateRequest, version: number): Promise<SaslAuthenticateResponse> {
    const state = this.#state;
    if (state.kind !== 'framed-tokens') return { errorCode: ErrorCode.ILLEGAL_SASL_STATE, errorMessage: AUTHENTICATE_AFTER_SUCCESS_MESSAGE, authBytes: NO_BYTES, sessionLifetimeMs: 0 };
    try {
      const step = await state.server.evaluate(request.authBytes);
      if (!step.done) return { errorCode: ErrorCode.NONE, errorMessage: null, authBytes: step.challenge, sessionLifetimeMs: 0 };
      const lifetimeMs = this.#complete(state.server.mechanism, step.principal, step.credentialExpiresAtMs, state.reauthentication);
      return { errorCode: ErrorCode.NONE, errorMessage: null, authBytes: step.response, sessionLifetimeMs: version >= SESSION_LIFETIME_VERSION ? lifetimeMs : 0 };
    } catch (error) {
      if (!(error instanceof SaslAuthenticationError)) throw error;
      await this.#refuse(state.server.mechanism, error.detail);
      const message = error.invalidCredentials && state.reauthentication ? invalidCredentialsMessage(state.server.mechanism, true) : error.message;
      return { errorCode: ErrorCode.SASL_AUTHENTICATION_FAILED, errorMessage: message, authBytes: NO_BYTES, sessionLifetimeMs: 0 };
    }
  }

  /**
   * [A3] A request other than SaslAuthenticate in the middle of an exchange (a client that took a
   * refusal challenge for success, as kafkajs does with OAUTHBEARER's): answered with its own
   * error response, ILLEGAL_SASL_STATE, after the delay, then the connection closes, as Kafka's
   * SaslServerAuthenticator.handleSaslToken answers it.
   */
  async #unexpectedDuringExchange(mechanism: string, why: string, frame: Uint8Array): Promise<Uint8Array[]> {
    const answer = this.#options.router.errorAnswer(frame, ErrorCode.ILLEGAL_SASL_STATE);
    await this.#refuse(mechanism, why);
    return answer;
  }

  /** [A4] After SaslHandshake v0: the frame is the token itself, the answer a bare frame too; a refusal just closes. */
  async #bareToken(server: SaslServer, token: Uint8Array): Promise<Uint8Array[] | null> {
    try {
      const step = await server.evaluate(token);
      if (!step.done) return [step.challenge];
      this.#complete(server.mechanism, step.principal, step.credentialExpiresAtMs, false);
      return [step.response];
    } catch (error) {
      if (!(error instanceof SaslAuthenticationError)) throw error;
      await this.#refuse(server.mechanism, error.detail);
      return null;
    }
  }

  /**
   * [A3]/[A5] The exchange succeeded: the session starts (a re-authentication must keep the
   * principal) with its lifetime, which is returned for session_lifetime_ms (0: none).
   */
  #complete(mechanism: string, principal: KafkaPrincipal, credentialExpiresAtMs: number | null, reauthentication: boolean): number {
    const { clock } = this.#options;
    if (reauthentication && !samePrincipal(principal, this.#session.principal)) {
      // Kafka's text (ReauthInfo.ensurePrincipalUnchanged): type and name joined by a dot
      const [before, after] = [this.#session.principal, principal].map((p) => `${p.type}.${p.name}`);
      throw new SaslAuthenticationError(`Cannot change principals during re-authentication from ${before}: ${after}`);
    }
    // Kafka's calcCompletionTimesAndReturnSessionLifetimeMs: a credential that expires ends the
    // session even when connections.max.reauth.ms is 0; with both, the sooner wins.
    const reauthMs = this.#options.listener.sasl!.reauthMs(mechanism);
    const credentialMs = credentialExpiresAtMs === null ? null : Math.max(0, credentialExpiresAtMs - clock.nowMs());
    const lifetimeMs = credentialMs === null ? Math.max(0, reauthMs) : reauthMs > 0 ? Math.min(reauthMs, credentialMs) : credentialMs;
    this.#expiresAtMs = credentialMs === null && reauthMs <= 0 ? null : clock.monotonicMs() + lifetimeMs;
    this.#session = this.#sessionOf(principal, mechanism);
    this.#state = { kind: 'authenticated' };
    this.#options.events.authenticated(this.#session, reauthentication);
    return lifetimeMs;
  }

  /** [A6] A refusal: counted, then answered only after the delay, then the connection ends. */
  async #refuse(mechanism: string | null, detail: string): Promise<void> {
    const { listener, events, clock, failedAuthenticationDelayMs } = this.#options;
    this.#state = { kind: 'refused' };
    events.failed(listener.name, mechanism, this.#clientAddress, detail);
    this.#options.endAfterResponses();
    if (failedAuthenticationDelayMs > 0) await new Promise<void>((resolve) => clock.setTimer(failedAuthenticationDelayMs, resolve, true));
  }

  #refuseTls(detail: string): false {
    this.#state = { kind: 'refused' };
    this.#options.events.failed(this.#options.listener.name, null, this.#clientAddress, detail);
    return false;
  }

  #expired(): boolean {
    return this.#expiresAtMs !== null && this.#options.clock.monotonicMs() >= this.#expiresAtMs;
  }

  #sessionOf(principal: KafkaPrincipal, saslMechanism: string | null): Session {
    const { listener } = this.#options;
    return { principal, clientAddress: this.#clientAddress, listenerName: listener.name, securityProtocol: listener.protocol, saslMechanism };
  }
}
