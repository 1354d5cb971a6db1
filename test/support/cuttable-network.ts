// The system network with one destination port that a test can cut off and heal: a broker's
// connections to another's Kafka port (its progress reports) fail while cut, as across a network
// partition, while everything else (its listener, its peer links, the object store) goes on.
import type { Network, NetSocket } from '../../src/util/network.ts';
import { systemNetwork } from '../../src/util/system-network.ts';

export class CuttableNetwork implements Network {
  /** The open connections made through it, by the port they go to. */
  readonly #open = new Map<NetSocket, number>();
  #cutPort: number | null = null;

  listen: Network['listen'] = (host, port, handlers) => systemNetwork.listen(host, port, handlers);

  resolve: Network['resolve'] = (host) => systemNetwork.resolve(host);

  connect: Network['connect'] = async (host, port, handlers) => {
    const unreachable = () => new Error(`injected: ${host}:${port} is unreachable`);
    if (port === this.#cutPort) throw unreachable();
    const socket = await systemNetwork.connect(host, port, {
      ...handlers,
      close: (closed) => {
        this.#open.delete(closed);
        handlers.close?.(closed);
      },
    });
    if (port === this.#cutPort) {
      // cut while it connected
      socket.terminate();
      throw unreachable();
    }
    this.#open.set(socket, port);
    return socket;
  };

  /** Connections to `port` are reset now, and new ones fail until `heal`. */
  cut(port: number): void {
    this.#cutPort = port;
    for (const [socket, to] of [...this.#open]) if (to === port) socket.terminate();
  }

  heal(): void {
    this.#cutPort = null;
  }
}
