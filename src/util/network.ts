/**
 * TCP as the broker and its peers use it, behind an interface (design contract 8): the system
 * implementation is Bun's sockets; the simulation's (src/sim/network.ts) carries bytes between
 * in-process endpoints with seeded delays, partitions and resets.
 */
export interface NetSocket {
  /** The peer's address, for logs and for matching a broker's registered host. */
  readonly remoteAddress: string;
  /** Writes what the socket takes now and returns that many bytes; the rest waits for `drain`. */
  write(bytes: Uint8Array): number;
  /** Closes after the bytes written so far are sent. */
  end(): void;
  /** Closes at once (a reset): unsent bytes are dropped. */
  terminate(): void;
  /** Stops delivering `data` until `resume` (TCP backpressure on the peer). */
  pause(): void;
  resume(): void;
}

export interface SocketHandlers {
  open?(socket: NetSocket): void;
  data(socket: NetSocket, chunk: Uint8Array): void;
  /** Room again after a short `write`. */
  drain?(socket: NetSocket): void;
  /** Called once, however the socket ended. */
  close?(socket: NetSocket): void;
  error?(socket: NetSocket, error: Error): void;
}

export interface Listener {
  readonly port: number;
  /** Stops accepting; with `closeActive`, also ends every accepted socket. */
  stop(closeActive?: boolean): void;
}

export interface Network {
  /** Port 0 picks a free port. */
  listen(host: string, port: number, handlers: SocketHandlers): Listener;
  /** Rejects when nothing listens there or the peer is unreachable. */
  connect(host: string, port: number, handlers: SocketHandlers): Promise<NetSocket>;
  /** A host name's addresses as peers' `remoteAddress` shows them (DNS on the system network); none if unknown. */
  resolve(host: string): Promise<string[]>;
}
