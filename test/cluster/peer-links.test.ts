// [K1] Peer links (src/cluster/peer-links.ts) on the simulated network: a peer whose process died
// (its kernel resets the connections and its listener is gone) is reported exited at once; one that
// is only paused or cut off by a partition is not (the lease judges it); a peer that comes back
// under a new incarnation is watched again.
import { expect, test } from 'bun:test';
import { PEER_CONNECTIONS_PER_ADDRESS_MAX, PEER_RECHECK_DELAY_MS, PEER_RECHECKS_MAX, PeerLinks } from '../../src/cluster/peer-links.ts';
import type { NetSocket, Network, SocketHandlers } from '../../src/util/network.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { settle } from '../support/settle.ts';
import { CONNECT_TIMEOUT_MS, SimNetwork } from '../../src/sim/network.ts';
import { ProcessGate, SIM_EPOCH_MS, SimScheduler } from '../../src/sim/scheduler.ts';
import { SeededRandom } from '../../src/util/random.ts';

const PEER_PORT = 9093;

function cluster() {
  const scheduler = new SimScheduler(new SeededRandom(7));
  const network = new SimNetwork(scheduler);
  const exits: { nodeId: number; incarnation: string; atMs: number }[] = [];
  const watcherGate = new ProcessGate('a');
  const watcherNetwork = network.host('a', watcherGate);
  const watcher = new PeerLinks({ network: watcherNetwork, listenHost: 'a', listenPort: PEER_PORT });
  watcher.open('incarnation-a', (nodeId, incarnation) => exits.push({ nodeId, incarnation, atMs: scheduler.nowMs - SIM_EPOCH_MS }));
  /** Starts a process on host b under `incarnation`. */
  const startPeer = (incarnation: string) => {
    const gate = new ProcessGate(`b-${incarnation}`);
    const links = new PeerLinks({ network: network.host('b', gate), listenHost: 'b', listenPort: PEER_PORT });
    links.open(incarnation, () => {});
    return gate;
  };
  const runFor = (ms: number) => scheduler.run(scheduler.nowMs + ms);
  return { scheduler, network, watcherNetwork, watcher, exits, startPeer, runFor };
}

test('a peer process that dies is reported exited within a few round trips', async () => {
  const { scheduler, network, watcher, exits, startPeer, runFor } = cluster();
  const gate = startPeer('b1');
  watcher.watch([{ nodeId: 2, host: 'b', port: PEER_PORT, incarnation: 'b1' }]);
  await runFor(50);
  expect(watcher.connected(2)).toBe(true);
  const killedAtMs = scheduler.nowMs - SIM_EPOCH_MS;
  gate.kill();
  network.kill('b');
  await runFor(100);
  expect(exits).toHaveLength(1);
  expect(exits[0]!.nodeId).toBe(2);
  expect(exits[0]!.incarnation).toBe('b1');
  expect(exits[0]!.atMs - killedAtMs).toBeLessThan(50);
});

test('a paused peer and a partitioned one are not reported: the lease judges them', async () => {
  const { network, watcher, exits, startPeer, runFor } = cluster();
  const gate = startPeer('b1');
  watcher.watch([{ nodeId: 2, host: 'b', port: PEER_PORT, incarnation: 'b1' }]);
  await runFor(50);
  gate.pause();
  await runFor(5_000);
  expect(exits).toHaveLength(0);
  gate.resume();
  network.partition('a', 'b'); // connections reset, new connects time out
  await runFor(3 * CONNECT_TIMEOUT_MS);
  watcher.watch([{ nodeId: 2, host: 'b', port: PEER_PORT, incarnation: 'b1' }]); // the next scan tries again
  await runFor(3 * CONNECT_TIMEOUT_MS);
  expect(exits).toHaveLength(0);
  network.heal('a', 'b');
  watcher.watch([{ nodeId: 2, host: 'b', port: PEER_PORT, incarnation: 'b1' }]);
  await runFor(3 * CONNECT_TIMEOUT_MS);
  expect(watcher.connected(2)).toBe(true);
  expect(exits).toHaveLength(0);
});

test('a peer restarted under a new incarnation: the old one is reported, the new one watched', async () => {
  const { network, watcher, exits, startPeer, runFor } = cluster();
  const gate = startPeer('b1');
  watcher.watch([{ nodeId: 2, host: 'b', port: PEER_PORT, incarnation: 'b1' }]);
  await runFor(50);
  gate.kill();
  network.kill('b');
  startPeer('b2'); // listening again before the watcher looks: it greets as another incarnation
  await runFor(100);
  expect(exits.map((e) => e.incarnation)).toEqual(['b1']);
  watcher.watch([{ nodeId: 2, host: 'b', port: PEER_PORT, incarnation: 'b2' }]);
  await runFor(50);
  expect(watcher.connected(2)).toBe(true);
});

test('a peer never greeted is not reported when nothing listens (a wrong address is no death)', async () => {
  const { watcher, exits, runFor } = cluster();
  watcher.watch([{ nodeId: 2, host: 'b', port: PEER_PORT, incarnation: 'b1' }]);
  await runFor(100);
  watcher.watch([{ nodeId: 2, host: 'b', port: PEER_PORT, incarnation: 'b1' }]);
  await runFor(100);
  expect(exits).toHaveLength(0);
});

test('a peer listener holds PEER_CONNECTIONS_PER_ADDRESS_MAX connections from one address; a watcher refused by it does not spin, and links up at the next scan once there is room', async () => {
  const { watcherNetwork, watcher, exits, startPeer, runFor } = cluster();
  startPeer('b1');
  // Something else on the watcher's own host opens connections to b's peer listener and keeps them.
  const squatter = watcherNetwork;
  const closed = new Set<NetSocket>();
  const connecting = Array.from({ length: PEER_CONNECTIONS_PER_ADDRESS_MAX + 4 }, () => squatter.connect('b', PEER_PORT, { data() {}, close: (socket) => void closed.add(socket) }));
  await runFor(50); // the simulated network connects as its clock runs
  const held = await Promise.all(connecting);
  await runFor(50);
  expect(held.length - closed.size).toBe(PEER_CONNECTIONS_PER_ADDRESS_MAX);
  watcher.watch([{ nodeId: 2, host: 'b', port: PEER_PORT, incarnation: 'b1' }]);
  await runFor(50);
  expect(watcher.connected(2)).toBe(false); // closed on arrival: no room for a's address
  held.find((socket) => !closed.has(socket))!.terminate(); // room for one
  await runFor(1_000);
  expect(watcher.connected(2)).toBe(false); // it did not keep reconnecting meanwhile
  watcher.watch([{ nodeId: 2, host: 'b', port: PEER_PORT, incarnation: 'b1' }]); // the next scan
  await runFor(50);
  expect(watcher.connected(2)).toBe(true);
  expect(exits).toHaveLength(0);
});

test('a greeted link that ends is tried again at once, and a connection closed before its greeting (a full listener) only PEER_RECHECKS_MAX times, spaced out: then the next scan tries again', async () => {
  // A network whose first connection greets as the watched process and then ends; every later one
  // is accepted and closed at once with no greeting, as a listener at its connection bound does.
  let connects = 0;
  const network: Network = {
    listen: () => ({ port: PEER_PORT, stop() {} }),
    resolve: async () => [],
    async connect(_host, _port, handlers) {
      const attempt = ++connects;
      const socket: NetSocket = { remoteAddress: 'b', write: (bytes) => bytes.length, end() {}, terminate() {}, pause() {}, resume() {} };
      queueMicrotask(() => {
        handlers.open?.(socket);
        if (attempt === 1) handlers.data(socket, new TextEncoder().encode('ferry-peer 1 b1\n'));
        queueMicrotask(() => handlers.close?.(socket));
      });
      return socket;
    },
  };
  const clock = new ManualClock();
  const watcher = new PeerLinks({ network, listenHost: 'a', listenPort: PEER_PORT, clock });
  watcher.open('incarnation-a', () => {});
  watcher.watch([{ nodeId: 2, host: 'b', port: PEER_PORT, incarnation: 'b1' }]);
  await settle();
  expect(connects).toBe(2); // the greeted link ended: one connect at once, closed before its greeting
  for (let recheck = 0; recheck < PEER_RECHECKS_MAX; recheck++) {
    clock.advance(PEER_RECHECK_DELAY_MS * 2 ** recheck - 1);
    await settle();
    expect(connects).toBe(2 + recheck); // not before its wait: no spin against the full listener
    clock.advance(1);
    await settle();
    expect(connects).toBe(3 + recheck);
  }
  clock.advance(60_000);
  await settle();
  expect(connects).toBe(2 + PEER_RECHECKS_MAX); // the rechecks are spent: nothing until the next scan
  watcher.watch([{ nodeId: 2, host: 'b', port: PEER_PORT, incarnation: 'b1' }]); // the next scan
  await settle();
  expect(connects).toBe(3 + PEER_RECHECKS_MAX);
  watcher.close();
});

/**
 * One peer on a network that kills as Linux's loopback was measured to: its connections are reset
 * first, and the connect that answers the reset is accepted by its dying listener and reset too,
 * before connects are refused.
 */
function dyingListenerNetwork() {
  let phase: 'alive' | 'dying' | 'dead' = 'alive';
  const live: { handlers: SocketHandlers; socket: NetSocket }[] = [];
  const socket = (): NetSocket => ({ remoteAddress: '127.0.0.1', write: (bytes) => bytes.length, end() {}, terminate() {}, pause() {}, resume() {} });
  const network: Network = {
    listen: () => ({ port: PEER_PORT, stop() {} }),
    resolve: async () => ['127.0.0.1'],
    async connect(_host, _port, handlers) {
      if (phase === 'dead') throw Object.assign(new Error('Failed to connect'), { code: 'ECONNREFUSED' });
      const opened = socket();
      handlers.open?.(opened);
      if (phase === 'dying') {
        phase = 'dead'; // the listener closes: this accepted connection is reset before any greeting
        queueMicrotask(() => handlers.close?.(opened));
      } else {
        live.push({ handlers, socket: opened });
        queueMicrotask(() => handlers.data(opened, new TextEncoder().encode('ferry-peer 1 b1\n')));
      }
      return opened;
    },
  };
  const kill = () => {
    phase = 'dying';
    for (const { handlers, socket: open } of live.splice(0)) handlers.close?.(open);
  };
  return { network, kill };
}

test('a killed peer whose dying listener accepts the first reconnect and resets it is reported exited after a short recheck, not at the next scan', async () => {
  const clock = new ManualClock();
  const { network, kill } = dyingListenerNetwork();
  const exits: number[] = [];
  const watcher = new PeerLinks({ network, listenHost: 'a', listenPort: PEER_PORT, clock });
  watcher.open('incarnation-a', (nodeId) => exits.push(nodeId));
  watcher.watch([{ nodeId: 2, host: 'b', port: PEER_PORT, incarnation: 'b1' }]);
  await settle();
  expect(watcher.connected(2)).toBe(true);
  kill();
  await settle();
  expect(exits).toEqual([]); // the reconnect was accepted, then reset: no greeting, no refusal yet
  clock.advance(PEER_RECHECK_DELAY_MS);
  await settle();
  expect(exits).toEqual([2]); // the recheck is refused: the process is gone, no scan needed
  watcher.close();
});
