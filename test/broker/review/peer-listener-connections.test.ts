// Adversarial review of issue 13, finding 2 (fixed): the [K1] peer listener of a cluster broker
// accepts every TCP connection, greets it and keeps it, with no authentication and no bound.
// It listens on the host of the broker's first listener, so any client that can reach the Kafka
// port can reach it, and neither max.connections nor max.connections.per.ip counts its
// connections: one unauthenticated host can hold as many sockets (file descriptors) as it likes,
// until the broker's descriptors run out and its Kafka listeners, segment files and store
// connections fail with them. Guarantee 1 of issue 13 ("before authentication a client cannot make
// the broker hold ... many connections") does not hold for this port.
//
// Fixed: the peer listener holds at most PEER_CONNECTIONS_PER_ADDRESS_MAX connections from one
// address and PEER_CONNECTIONS_MAX in all, closing others on arrival; a watcher reconnects at once
// only when a greeted connection ends, and one closed before its greeting waits for the next scan
// (so a full listener does not make peers spin).
import { afterEach, expect, test } from 'bun:test';
import type { Socket } from 'bun';
import { Broker } from '../../../src/broker/broker.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { TEST_LEASE_MS, TEST_SCAN_INTERVAL_MS } from '../../support/cluster-brokers.ts';
import { tempDir } from '../../support/temp-dir.ts';

const running: Broker[] = [];
const sockets: Socket<undefined>[] = [];
/** The broker's max.connections here: the peer listener should hold no more than its Kafka listeners would. */
const MAX_CONNECTIONS = 20;
const ATTEMPTS = 200;

afterEach(async () => {
  for (const socket of sockets.splice(0)) socket.terminate();
  for (const broker of running.splice(0)) await broker.stop();
});

async function freePort(): Promise<number> {
  const listener = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

test('the peer listener holds no more connections than max.connections, however many an unauthenticated host opens', async () => {
  const store = new MemoryStore();
  const peerPort = await freePort();
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    maxConnections: MAX_CONNECTIONS,
    cluster: { store, leaseMs: TEST_LEASE_MS, scanIntervalMs: TEST_SCAN_INTERVAL_MS, peerPort },
    engine: { directory: tempDir(), log: { flush: { kind: 'none' } }, wal: { store, writerId: 'broker-1', config: { uploadIntervalMs: 1 } } },
  });
  running.push(broker);
  const greeted = new Set<Socket<undefined>>();
  const closed = new Set<Socket<undefined>>();
  for (let i = 0; i < ATTEMPTS; i++) {
    sockets.push(await Bun.connect({ hostname: '127.0.0.1', port: peerPort, socket: { data: (socket) => void greeted.add(socket), close: (socket) => void closed.add(socket) } }));
  }
  await Bun.sleep(500);
  const held = sockets.filter((socket) => !closed.has(socket)).length;
  expect(greeted.size).toBeGreaterThan(0); // it is a peer listener: it greets
  expect(held).toBeLessThanOrEqual(MAX_CONNECTIONS);
});
