import { componentLogger, type LoggerOption } from '../observability/logger.ts';
import { defaultLogger } from '../observability/record-logger.ts';
import type { MetricsRegistry } from '../metrics/index.ts';
import { assert } from '../util/assert.ts';
import { type Clock, systemClock } from '../util/clock.ts';
import type { Listener, NetSocket, Network } from '../util/network.ts';
import { systemNetwork } from '../util/system-network.ts';
import { type AuthenticationEvents, Channel } from './auth/channel.ts';
import { FAILED_AUTHENTICATION_DELAY_MS_DEFAULT, type ListenerSecurity } from './auth/listener-security.ts';
import { CONNECTIONS_MAX_IDLE_MS_DEFAULT, Connection, QUEUED_REQUEST_BYTES_MAX_DEFAULT, REQUEST_BYTES_MAX } from './connection.ts';
import { ConnectionLimits, type Refusal } from './connection-limits.ts';
import { ReadBufferPool } from './read-buffer-pool.ts';
import { RequestMemory } from './request-memory.ts';
import type { Router } from './router.ts';

/**
 * Kafka's max.connections (which Kafka leaves unbounded): connections beyond it are closed as soon
 * as they open. Each costs a file descriptor, a socket's kernel buffers and a little state here;
 * 1000 stays under the common 1024 descriptor limit with room left for segment files.
 */
export const MAX_CONNECTIONS_DEFAULT = 1000;

/** A listener without security: PLAINTEXT, every client ANONYMOUS. */
export const PLAINTEXT_LISTENER: ListenerSecurity = { name: 'PLAINTEXT', protocol: 'PLAINTEXT', tls: null, sslPrincipal: null, sasl: null };

export interface ServerOptions {
  readonly hostname: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly router: Router;
  /** How its connections authenticate (TLS, SASL); PLAINTEXT_LISTENER by default. */
  readonly listener?: ListenerSecurity;
  /** Where connection-level problems are reported (malformed frames, handler bugs, refused authentications). */
  /** Where connection events go (component broker); warn and above on stderr by default. */
  readonly log?: LoggerOption;
  /** Connections open at once; more are closed on arrival (max.connections). Ignored when `limits` is given. */
  readonly maxConnections?: number;
  /** The connection counts shared by every listener of a broker (max.connections, max.connections.per.ip). */
  readonly limits?: ConnectionLimits;
  /** A connection without progress this long (nothing read or written, no request being handled) is closed (connections.max.idle.ms). */
  readonly connectionsMaxIdleMs?: number;
  /** Bytes of requests held at once across connections (queued.max.request.bytes); at least REQUEST_BYTES_MAX. Ignored when `memory` is given. */
  readonly queuedMaxRequestBytes?: number;
  /** The request budget shared by every listener of a broker. */
  readonly memory?: RequestMemory;
  /** The memory Fetch responses read segments into, shared by every listener of a broker; one of its own by default. */
  readonly readBuffers?: ReadBufferPool;
  /** connection.failed.authentication.delay.ms. */
  readonly failedAuthenticationDelayMs?: number;
  /** Told of every authentication, succeeded or refused (the broker counts and logs them). */
  readonly authentication?: AuthenticationEvents;
  /** Drives the idle timeouts. */
  readonly clock?: Clock;
  /** Where the connection count and refusals are counted. */
  readonly metrics?: MetricsRegistry;
  /** The sockets it listens on; the operating system's by default. */
  readonly network?: Network;
}

/** The Kafka protocol listener: one Connection per client, its security in a Channel, requests routed in order. */
export class KafkaServer {
  readonly #listener: Listener;
  readonly #connections: Set<Connection>;
  readonly #refused: { count: number };

  private constructor(listener: Listener, connections: Set<Connection>, refused: { count: number }) {
    this.#listener = listener;
    this.#connections = connections;
    this.#refused = refused;
  }

  static listen(options: ServerOptions): KafkaServer {
    const logger = componentLogger(options.log, 'broker', defaultLogger(options.clock ?? systemClock));
    const security = options.listener ?? PLAINTEXT_LISTENER;
    const limits = options.limits ?? new ConnectionLimits({ maxConnections: options.maxConnections ?? MAX_CONNECTIONS_DEFAULT });
    const memory = options.memory ?? new RequestMemory(options.queuedMaxRequestBytes ?? QUEUED_REQUEST_BYTES_MAX_DEFAULT);
    const readBuffers = options.readBuffers ?? new ReadBufferPool();
    assert(memory.bytesMax >= REQUEST_BYTES_MAX, `queued.max.request.bytes (${memory.bytesMax}) holds the largest request (${REQUEST_BYTES_MAX})`);
    const clock = options.clock ?? systemClock;
    const idleMs = options.connectionsMaxIdleMs ?? CONNECTIONS_MAX_IDLE_MS_DEFAULT;
    const events = options.authentication ?? {
      authenticated: () => {},
      failed: (listener, mechanism, address, detail) =>
        logger.info({ listener, mechanism, clientAddress: address }, `authentication from ${address} on ${listener}${mechanism === null ? '' : ` (${mechanism})`} failed: ${detail}`),
    };
    const connections = new Set<Connection>();
    // Each accepted socket's connection and channel (a socket refused on arrival has none).
    const bySocket = new Map<NetSocket, { connection: Connection; channel: Channel }>();
    const refused = { count: 0, logged: new Set<Refusal>() };
    const labels = { listener: security.name };
    const openGauge = options.metrics?.gauge('ferry_broker_connections', 'Client connections open', { labels });
    const refusals = options.metrics?.counter('ferry_broker_connections_refused_total', 'Connections closed on arrival because max.connections were open', { labels });
    const perIpRefusals = options.metrics?.counter('ferry_broker_connections_refused_per_ip_total', 'Connections closed on arrival because max.connections.per.ip from their address were open', {
      labels,
    });
    const refuse = (socket: NetSocket, refusal: Refusal): void => {
      refused.count++;
      (refusal === 'max.connections' ? refusals : perIpRefusals)?.add();
      // once per spell, not per refusal
      if (!refused.logged.has(refusal))
        logger.warn(
          { refusal, clientAddress: socket.remoteAddress },
          refusal === 'max.connections'
            ? `max.connections (${limits.maxConnections}) reached: closing new connections until some end`
            : `max.connections.per.ip reached for ${socket.remoteAddress}: closing its new connections until some end`,
        );
      refused.logged.add(refusal);
      socket.terminate();
    };
    const listener = (options.network ?? systemNetwork).listen(
      options.hostname,
      options.port,
      {
        open(socket) {
          const refusal = limits.admit(socket.remoteAddress);
          if (refusal !== null) return refuse(socket, refusal);
          const peer = `${socket.remoteAddress}`;
          let connection: Connection | undefined;
          const channel = new Channel({
            router: options.router,
            listener: security,
            socket,
            clock,
            events,
            failedAuthenticationDelayMs: options.failedAuthenticationDelayMs ?? FAILED_AUTHENTICATION_DELAY_MS_DEFAULT,
            endAfterResponses: () => connection?.endAfterResponses(),
            muteFor: (ms) => connection?.muteFor(ms),
          });
          connection = new Connection(
            socket,
            (frame, responseBuffers) => channel.handle(frame, responseBuffers),
            (error) => logger.info({ peer, err: error }, `connection from ${peer} closed: ${error instanceof Error ? error.message : String(error)}`),
            { memory, readBuffers, clock, idleMs, frameBytesMax: () => channel.frameBytesMax(), pooled: () => channel.framesPooled() },
          );
          bySocket.set(socket, { connection, channel });
          connections.add(connection);
          openGauge?.set(connections.size);
        },
        handshake(socket) {
          const entry = bySocket.get(socket);
          if (entry !== undefined && !entry.channel.tlsEstablished()) socket.terminate();
        },
        data(socket, chunk) {
          bySocket.get(socket)?.connection.received(chunk);
        },
        drain(socket) {
          bySocket.get(socket)?.connection.drain();
        },
        close(socket) {
          const entry = bySocket.get(socket);
          if (entry === undefined) return;
          entry.connection.close();
          bySocket.delete(socket);
          connections.delete(entry.connection);
          limits.release(socket.remoteAddress);
          openGauge?.set(connections.size);
          if (limits.open < limits.maxConnections) refused.logged.delete('max.connections');
          refused.logged.delete('max.connections.per.ip');
        },
        error(socket, error) {
          bySocket.get(socket)?.connection.close(error);
        },
      },
      security.tls === null ? {} : { tls: security.tls },
    );
    return new KafkaServer(listener, connections, refused);
  }

  get port(): number {
    return this.#listener.port;
  }

  get connectionCount(): number {
    return this.#connections.size;
  }

  /** Connections closed on arrival because max.connections (or max.connections.per.ip) were open. */
  get refusedConnectionCount(): number {
    return this.#refused.count;
  }

  /** Stops accepting and closes every connection. */
  stop(): void {
    for (const connection of this.#connections) connection.close();
    this.#listener.stop(true);
  }
}
