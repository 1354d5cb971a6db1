import { isIP } from 'node:net';
import type { TLSOptions } from 'bun';
import type { X509Certificate } from 'node:crypto';

/**
 * TCP as the broker and its peers use it, behind an interface (docs/design.md contract 8): the system
 * implementation is Bun's sockets; the simulation's (src/sim/network.ts) carries bytes between
 * in-process endpoints with seeded delays, partitions and resets.
 */
export interface NetSocket {
  /** The peer's address, for logs and for matching a broker's registered host. */
  readonly remoteAddress: string;
  /**
   * Writes what the socket takes now and returns that many bytes; the rest waits for `drain`. The
   * bytes taken are copied (into the kernel's buffer): the caller may reuse its buffer at once.
   */
  write(bytes: Uint8Array): number;
  /** Closes after the bytes written so far are sent. */
  end(): void;
  /** Closes at once (a reset): unsent bytes are dropped. */
  terminate(): void;
  /** Stops delivering `data` until `resume` (TCP backpressure on the peer). */
  pause(): void;
  resume(): void;
  /** What TLS established, on a socket of a TLS listener or a TLS connect; absent on plain TCP. */
  readonly tls?: TlsPeer;
}

/** The peer as its TLS handshake showed it. */
export interface TlsPeer {
  /** Whether the peer presented a certificate that verified against the trusted CAs (and no CRL revoked). */
  readonly authorized: boolean;
  /** Why it did not verify (`certificate revoked`, ...); null when it did or none was asked for. */
  readonly authorizationError: string | null;
  /** The certificate the peer presented, if any. */
  peerCertificate(): X509Certificate | undefined;
  /** The protocol agreed (`TLSv1.3`). */
  readonly protocol: string;
}

/**
 * How a listener runs TLS: asked once per accepted connection, so that a reload (SIGHUP) takes
 * effect for the next connection without restarting the listener. Bun's TLS options (PEM).
 */
export type TlsServerOptionsSource = () => TLSOptions;

export interface ListenOptions {
  /** Every accepted socket first completes a TLS handshake; `open` follows only once it succeeded. */
  readonly tls?: TlsServerOptionsSource;
}

export interface ConnectOptions {
  /** Connect with TLS (verifying the server against `ca`, presenting `cert`/`key` for mTLS). */
  readonly tls?: TLSOptions;
}

export interface SocketHandlers {
  open?(socket: NetSocket): void;
  data(socket: NetSocket, chunk: Uint8Array): void;
  /** A TLS listener's socket finished its handshake (`socket.tls` is filled in); data flows only after it. */
  handshake?(socket: NetSocket): void;
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
  /** Port 0 picks a free port. A network without TLS (the simulation's) throws if `options.tls` is given. */
  listen(host: string, port: number, handlers: SocketHandlers, options?: ListenOptions): Listener;
  /** Rejects when nothing listens there, the peer is unreachable or (TLS) the handshake fails. */
  connect(host: string, port: number, handlers: SocketHandlers, options?: ConnectOptions): Promise<NetSocket>;
  /** A host name's addresses as peers' `remoteAddress` shows them (DNS on the system network); none if unknown. */
  resolve(host: string): Promise<string[]>;
}

/** A client's address as ACLs and per-IP limits compare it: an IPv4 client seen through an IPv6 socket (`::ffff:10.0.0.1`) is its IPv4 address. */
export function clientAddressOf(remoteAddress: string): string {
  return remoteAddress.startsWith('::ffff:') && remoteAddress.includes('.') ? remoteAddress.slice('::ffff:'.length) : remoteAddress;
}

/**
 * An IP address in one written form, so that two forms of one address compare equal: an IPv6
 * address compressed and in lower case (Kafka's ACL hosts are Java's InetAddress.getHostAddress(),
 * the full form `0:0:0:0:0:0:0:1`; Bun's sockets write `::1`). Anything else (IPv4, `*`, a name,
 * an IPv6 address with a zone) comes back as it is.
 */
export function canonicalAddress(address: string): string {
  if (!address.includes(':') || isIP(address) !== 6) return address;
  try {
    return new URL(`http://[${address}]`).hostname.slice(1, -1);
  } catch {
    return address;
  }
}
