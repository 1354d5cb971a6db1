import type { Socket, TCPSocketListener } from 'bun';
import { Connection } from './connection.ts';
import type { Router } from './router.ts';

export interface ServerOptions {
  readonly hostname: string;
  /** 0 picks a free port. */
  readonly port: number;
  readonly router: Router;
  /** Where connection-level problems are reported (malformed frames, handler bugs). */
  readonly log?: (message: string) => void;
}

interface SocketData {
  connection: Connection;
  peer: string;
}

/** The Kafka protocol listener on Bun sockets: one Connection per client, requests routed in order. */
export class KafkaServer {
  readonly #listener: TCPSocketListener<SocketData>;
  readonly #connections: Set<Connection>;

  private constructor(listener: TCPSocketListener<SocketData>, connections: Set<Connection>) {
    this.#listener = listener;
    this.#connections = connections;
  }

  static listen(options: ServerOptions): KafkaServer {
    const log = options.log ?? ((message: string) => console.error(message));
    const connections = new Set<Connection>();
    const listener = Bun.listen<SocketData>({
      hostname: options.hostname,
      port: options.port,
      socket: {
        open(socket) {
          const peer = `${socket.remoteAddress}`;
          const connection = new Connection(socket as Socket<unknown>, (frame) => options.router.handle(frame, peer), (error) => log(`connection from ${peer} closed: ${error instanceof Error ? error.message : String(error)}`));
          socket.data = { connection, peer };
          connections.add(connection);
        },
        data(socket, chunk) {
          socket.data.connection.received(chunk);
        },
        drain(socket) {
          socket.data.connection.drain();
        },
        close(socket) {
          socket.data?.connection.close();
          if (socket.data !== undefined) connections.delete(socket.data.connection);
        },
        error(socket, error) {
          socket.data?.connection.close(error);
        },
      },
    });
    return new KafkaServer(listener, connections);
  }

  get port(): number {
    return this.#listener.port;
  }

  get connectionCount(): number {
    return this.#connections.size;
  }

  /** Stops accepting and closes every connection. */
  stop(): void {
    for (const connection of this.#connections) connection.close();
    this.#listener.stop(true);
  }
}
