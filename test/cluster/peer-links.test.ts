// [K1] Peer links (src/cluster/peer-links.ts) on the simulated network: a peer whose process died
// (its kernel resets the connections and its listener is gone) is reported exited at once; one that
// is only paused or cut off by a partition is not (the lease judges it); a peer that comes back
// under a new incarnation is watched again.
import { expect, test } from 'bun:test';
import { PeerLinks } from '../../src/cluster/peer-links.ts';
import { CONNECT_TIMEOUT_MS, SimNetwork } from '../../src/sim/network.ts';
import { ProcessGate, SIM_EPOCH_MS, SimScheduler } from '../../src/sim/scheduler.ts';
import { SeededRandom } from '../../src/util/random.ts';

const PEER_PORT = 9093;

function cluster() {
  const scheduler = new SimScheduler(new SeededRandom(7));
  const network = new SimNetwork(scheduler);
  const exits: { nodeId: number; incarnation: string; atMs: number }[] = [];
  const watcherGate = new ProcessGate('a');
  const watcher = new PeerLinks({ network: network.host('a', watcherGate), listenHost: 'a', listenPort: PEER_PORT });
  watcher.open('incarnation-a', (nodeId, incarnation) => exits.push({ nodeId, incarnation, atMs: scheduler.nowMs - SIM_EPOCH_MS }));
  /** Starts a process on host b under `incarnation`. */
  const startPeer = (incarnation: string) => {
    const gate = new ProcessGate(`b-${incarnation}`);
    const links = new PeerLinks({ network: network.host('b', gate), listenHost: 'b', listenPort: PEER_PORT });
    links.open(incarnation, () => {});
    return gate;
  };
  const runFor = (ms: number) => scheduler.run(scheduler.nowMs + ms);
  return { scheduler, network, watcher, exits, startPeer, runFor };
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
