import type { Socket, TLSOptions } from 'bun';
import { lookup } from 'node:dns/promises';
import type { ConnectOptions, ListenOptions, Listener, NetSocket, Network, SocketHandlers, TlsPeer } from './network.ts';

/**
 * A TLS handshake that has not completed this long after the TCP accept ends the connection: a
 * client that opens TCP and says nothing would otherwise hold a socket (and its place under
 * max.connections) for connections.max.idle.ms. Real handshakes take a few round trips.
 */
export const TLS_HANDSHAKE_TIMEOUT_MS = 10_000;

/** What a socket's `data` holds: its NetSocket, or for a raw socket upgraded to TLS, a mark that its events belong to the TLS socket. */
type SocketData = NetSocket | { readonly upgraded: true } | undefined;

/** A Bun socket seen as a NetSocket: the same object for every event of one connection. */
function netSocketOf(socket: Socket<SocketData>, tls?: TlsPeer): NetSocket {
  socket.data ??= {
    get remoteAddress() {
      return socket.remoteAddress;
    },
    write: (bytes) => socket.write(bytes),
    end: () => void socket.end(),
    terminate: () => socket.terminate(),
    pause: () => socket.pause(),
    resume: () => socket.resume(),
    ...(tls === undefined ? {} : { tls }),
  };
  return socket.data as NetSocket;
}

function isUpgradedRaw(socket: Socket<SocketData>): boolean {
  return socket.data !== undefined && 'upgraded' in socket.data;
}

/** Bun's socket handlers that hand each event on as the NetSocket's (a raw socket upgraded to TLS hands on nothing). */
function bunHandlers(handlers: SocketHandlers) {
  return {
    open(socket: Socket<SocketData>) {
      handlers.open?.(netSocketOf(socket));
    },
    data(socket: Socket<SocketData>, chunk: Uint8Array) {
      if (!isUpgradedRaw(socket)) handlers.data(netSocketOf(socket), chunk);
    },
    drain(socket: Socket<SocketData>) {
      if (!isUpgradedRaw(socket)) handlers.drain?.(netSocketOf(socket));
    },
    close(socket: Socket<SocketData>) {
      if (!isUpgradedRaw(socket)) handlers.close?.(netSocketOf(socket));
    },
    error(socket: Socket<SocketData>, error: Error) {
      if (!isUpgradedRaw(socket)) handlers.error?.(netSocketOf(socket), error);
    },
  };
}

/** A TLS socket's peer as its handshake left it (filled in by the handshake). */
class HandshakePeer implements TlsPeer {
  authorized = false;
  authorizationError: string | null = null;
  protocol = '';
  readonly #socket: Socket<SocketData>;

  constructor(socket: Socket<SocketData>) {
    this.#socket = socket;
  }

  peerCertificate() {
    return this.#socket.getPeerX509Certificate?.() ?? undefined;
  }
}

/**
 * Accepts a TCP connection, then runs TLS over it with the options the listener holds now (so a
 * reload applies to the next connection). `open` comes at once (the connection counts from its
 * TCP accept), `handshake` once TLS is up (data flows only after it); a handshake that fails or
 * does not finish within TLS_HANDSHAKE_TIMEOUT_MS closes the connection.
 */
function tlsAcceptHandlers(handlers: SocketHandlers, tlsOptions: () => TLSOptions) {
  const forward = bunHandlers(handlers);
  return {
    ...forward,
    open(raw: Socket<SocketData>) {
      raw.data = { upgraded: true };
      let peer: HandshakePeer | undefined;
      const timeout = setTimeout(() => secure.terminate(), TLS_HANDSHAKE_TIMEOUT_MS);
      timeout.unref();
      const [, secure] = raw.upgradeTLS<SocketData>({
        tls: tlsOptions(),
        socket: {
          ...forward,
          open() {}, // the connection opened at its TCP accept
          close(socket: Socket<SocketData>) {
            clearTimeout(timeout);
            forward.close(socket);
          },
          handshake(socket: Socket<SocketData>, success: boolean, authorizationError: Error | null) {
            clearTimeout(timeout);
            if (!success) return void socket.terminate();
            peer!.authorized = socket.authorized;
            peer!.authorizationError = socket.authorized ? null : (authorizationError?.message ?? null);
            peer!.protocol = socket.getTLSVersion();
            handlers.handshake?.(netSocketOf(socket));
          },
        },
      });
      peer = new HandshakePeer(secure);
      handlers.open?.(netSocketOf(secure, peer));
    },
  };
}

/** The operating system's TCP through Bun.listen and Bun.connect: what production runs on. */
export const systemNetwork: Network = {
  listen(host: string, port: number, handlers: SocketHandlers, options: ListenOptions = {}): Listener {
    const socket = options.tls === undefined ? bunHandlers(handlers) : tlsAcceptHandlers(handlers, options.tls);
    const listener = Bun.listen<SocketData>({ hostname: host, port, socket });
    return {
      get port() {
        return listener.port;
      },
      stop: (closeActive) => listener.stop(closeActive),
    };
  },

  async connect(host: string, port: number, handlers: SocketHandlers, options: ConnectOptions = {}): Promise<NetSocket> {
    if (options.tls === undefined) return netSocketOf(await Bun.connect<SocketData>({ hostname: host, port, socket: bunHandlers(handlers) }));
    let peer: HandshakePeer | undefined;
    const handshaken = Promise.withResolvers<void>();
    handshaken.promise.catch(() => {}); // awaited below once connected; a connect that fails rejects on its own
    const forward = bunHandlers(handlers);
    const socket = await Bun.connect<SocketData>({
      hostname: host,
      port,
      tls: options.tls,
      socket: {
        ...forward,
        open(tlsSocket: Socket<SocketData>) {
          peer = new HandshakePeer(tlsSocket);
          handlers.open?.(netSocketOf(tlsSocket, peer));
        },
        handshake(tlsSocket: Socket<SocketData>, success: boolean, authorizationError: Error | null) {
          if (!success || !tlsSocket.authorized) {
            tlsSocket.terminate();
            return handshaken.reject(new Error(`TLS handshake with ${host}:${port} failed: ${authorizationError?.message ?? 'refused'}`));
          }
          peer!.authorized = true;
          peer!.protocol = tlsSocket.getTLSVersion();
          handshaken.resolve();
        },
        close(tlsSocket: Socket<SocketData>) {
          handshaken.reject(new Error(`connection to ${host}:${port} closed during the TLS handshake`));
          forward.close(tlsSocket);
        },
      },
    });
    const net = netSocketOf(socket, peer ?? new HandshakePeer(socket));
    await handshaken.promise;
    return net;
  },

  async resolve(host: string): Promise<string[]> {
    return (await lookup(host, { all: true })).map((entry) => entry.address);
  },
};
