import type { MetricsRegistry } from '../metrics/index.ts';
import { assert } from '../util/assert.ts';
import { type Clock, systemClock } from '../util/clock.ts';
import type { Listener, NetSocket, Network } from '../util/network.ts';
import { systemNetwork } from '../util/system-network.ts';
import { CONNECTIONS_MAX_IDLE_MS_DEFAULT, Connection, QUEUED_REQUEST_BYTES_MAX_DEFAULT, REQUEST_BYTES_MAX } from './connection.ts';
import { RequestMemory } from './request-memory.ts';
import type { Router } from './router.ts';

/**
 * Kafka's max.connections (which Kafka leaves unbounded): connections beyond it are closed as soon
 * as they open. Each costs a file descriptor, a socket's kernel buffers and a little state here;
 * 1000 stays under the common 1024 descriptor limit with room left for segment files.
 */
export const MAX_CONNECTIONS_DEFAULT = 1000;

export interface ServerOptions {
  readonly hostname: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly router: Router;
  /** Where connection-level problems are reported (malformed frames, handler bugs). */
  readonly log?: (message: string) => void;
  /** Connections open at once; more are closed on arrival (max.connections). */
  readonly maxConnections?: number;
  /** A connection without progress this long (nothing read or written, no request being handled) is closed (connections.max.idle.ms). */
  readonly connectionsMaxIdleMs?: number;
  /** Bytes of requests held at once across connections (queued.max.request.bytes); at least REQUEST_BYTES_MAX. */
  readonly queuedMaxRequestBytes?: number;
  /** Drives the idle timeouts. */
  readonly clock?: Clock;
  /** Where the connection count and refusals are counted. */
  readonly metrics?: MetricsRegistry;
  /** The sockets it listens on; the operating system's by default. */
  readonly network?: Network;
}

/** The Kafka protocol listener: one Connection per client, requests routed in order. */
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
    const log = options.log ?? ((message: string) => console.error(message));
    const maxConnections = options.maxConnections ?? MAX_CONNECTIONS_DEFAULT;
    const memory = new RequestMemory(options.queuedMaxRequestBytes ?? QUEUED_REQUEST_BYTES_MAX_DEFAULT);
    assert(memory.bytesMax >= REQUEST_BYTES_MAX, `queued.max.request.bytes (${memory.bytesMax}) holds the largest request (${REQUEST_BYTES_MAX})`);
    assert(Number.isSafeInteger(maxConnections) && maxConnections > 0, 'max.connections is a positive integer');
    const connectionOptions = { memory, clock: options.clock ?? systemClock, idleMs: options.connectionsMaxIdleMs ?? CONNECTIONS_MAX_IDLE_MS_DEFAULT };
    const connections = new Set<Connection>();
    // Each accepted socket's connection (a socket refused on arrival has none).
    const bySocket = new Map<NetSocket, Connection>();
    const refused = { count: 0, logged: false };
    const openGauge = options.metrics?.gauge('ferry_broker_connections', 'Client connections open');
    const refusals = options.metrics?.counter('ferry_broker_connections_refused_total', 'Connections closed on arrival because max.connections were open');
    const listener = (options.network ?? systemNetwork).listen(options.hostname, options.port, {
      open(socket) {
        if (connections.size >= maxConnections) {
          refused.count++;
          refusals?.add();
          if (!refused.logged) log(`max.connections (${maxConnections}) reached: closing new connections until some end`); // once per spell, not per refusal
          refused.logged = true;
          socket.terminate();
          return;
        }
        const peer = `${socket.remoteAddress}`;
        const connection = new Connection(socket, (frame) => options.router.handle(frame, peer), (error) => log(`connection from ${peer} closed: ${error instanceof Error ? error.message : String(error)}`), connectionOptions);
        bySocket.set(socket, connection);
        connections.add(connection);
        openGauge?.set(connections.size);
      },
      data(socket, chunk) {
        bySocket.get(socket)?.received(chunk);
      },
      drain(socket) {
        bySocket.get(socket)?.drain();
      },
      close(socket) {
        const connection = bySocket.get(socket);
        if (connection === undefined) return;
        connection.close();
        bySocket.delete(socket);
        connections.delete(connection);
        openGauge?.set(connections.size);
        if (connections.size < maxConnections) refused.logged = false;
      },
      error(socket, error) {
        bySocket.get(socket)?.close(error);
      },
    });
    return new KafkaServer(listener, connections, refused);
  }

  get port(): number {
    return this.#listener.port;
  }

  get connectionCount(): number {
    return this.#connections.size;
  }

  /** Connections closed on arrival because max.connections were open. */
  get refusedConnectionCount(): number {
    return this.#refused.count;
  }

  /** Stops accepting and closes every connection. */
  stop(): void {
    for (const connection of this.#connections) connection.close();
    this.#listener.stop(true);
  }
}
