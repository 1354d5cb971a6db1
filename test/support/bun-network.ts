/**
 * The Network interface (src/util/network.ts) over Bun's TCP sockets, client side only: enough for
 * the simulated clients to talk to a real broker in a test. `listen` is not needed there.
 */
import type { Socket } from 'bun';
import type { NetSocket, Network, SocketHandlers } from '../../src/util/network.ts';

function wrap(socket: Socket<undefined>): NetSocket {
  return {
    remoteAddress: socket.remoteAddress,
    write: (bytes) => socket.write(bytes),
    end: () => socket.end(),
    terminate: () => socket.terminate(),
    pause: () => socket.pause(),
    resume: () => socket.resume(),
  };
}

export const bunClientNetwork: Network = {
  listen() {
    throw new Error('bunClientNetwork connects only');
  },
  async connect(host: string, port: number, handlers: SocketHandlers): Promise<NetSocket> {
    let wrapped: NetSocket | null = null;
    const of = (socket: Socket<undefined>) => (wrapped ??= wrap(socket));
    const socket = await Bun.connect({
      hostname: host,
      port,
      socket: {
        open: (s) => handlers.open?.(of(s)),
        data: (s, chunk) => handlers.data(of(s), chunk),
        drain: (s) => handlers.drain?.(of(s)),
        close: (s) => handlers.close?.(of(s)),
        error: (s, error) => handlers.error?.(of(s), error),
      },
    });
    return of(socket);
  },
};
