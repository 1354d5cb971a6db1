import type { Socket } from 'bun';
import { lookup } from 'node:dns/promises';
import type { Listener, NetSocket, Network, SocketHandlers } from './network.ts';

/** A Bun socket seen as a NetSocket: the same object for every event of one connection. */
function netSocketOf(socket: Socket<NetSocket | undefined>): NetSocket {
  socket.data ??= {
    get remoteAddress() {
      return socket.remoteAddress;
    },
    write: (bytes) => socket.write(bytes),
    end: () => void socket.end(),
    terminate: () => socket.terminate(),
    pause: () => socket.pause(),
    resume: () => socket.resume(),
  };
  return socket.data;
}

/** Bun's socket handlers that hand each event on as the NetSocket's. */
function bunHandlers(handlers: SocketHandlers) {
  return {
    open(socket: Socket<NetSocket | undefined>) {
      handlers.open?.(netSocketOf(socket));
    },
    data(socket: Socket<NetSocket | undefined>, chunk: Uint8Array) {
      handlers.data(netSocketOf(socket), chunk);
    },
    drain(socket: Socket<NetSocket | undefined>) {
      handlers.drain?.(netSocketOf(socket));
    },
    close(socket: Socket<NetSocket | undefined>) {
      handlers.close?.(netSocketOf(socket));
    },
    error(socket: Socket<NetSocket | undefined>, error: Error) {
      handlers.error?.(netSocketOf(socket), error);
    },
  };
}

/** The operating system's TCP through Bun.listen and Bun.connect: what production runs on. */
export const systemNetwork: Network = {
  listen(host: string, port: number, handlers: SocketHandlers): Listener {
    const listener = Bun.listen<NetSocket | undefined>({ hostname: host, port, socket: bunHandlers(handlers) });
    return {
      get port() {
        return listener.port;
      },
      stop: (closeActive) => listener.stop(closeActive),
    };
  },

  async connect(host: string, port: number, handlers: SocketHandlers): Promise<NetSocket> {
    const socket = await Bun.connect<NetSocket | undefined>({ hostname: host, port, socket: bunHandlers(handlers) });
    return netSocketOf(socket);
  },

  async resolve(host: string): Promise<string[]> {
    return (await lookup(host, { all: true })).map((entry) => entry.address);
  },
};
