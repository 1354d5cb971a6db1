// Two cluster brokers on the simulated network (replication factor 2, min.insync.replicas 2):
// the follower's progress reports reach the leader over a SimNetwork connection, its address is
// checked through the network's resolve, and the lease and scan timers run on SimClocks. An
// acks=all produce completes only if all of that works; the trap shows none of it reached real
// time, randomness or sockets. The engines' directories are real until the disk is injectable.
import { afterEach, expect, test } from 'bun:test';
import { rmSync } from 'node:fs';
import { Broker } from '../../src/broker/broker.ts';
import { SimNetwork } from '../../src/sim/network.ts';
import { ProcessGate, SimClock, SimScheduler } from '../../src/sim/scheduler.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { tempDir } from '../support/temp-dir.ts';
import { RealTimeTrap } from './real-time-trap.ts';

const BROKER_PORT = 9092;
const LEASE_MS = 3_000;
const SCAN_INTERVAL_MS = 100;
/** Simulated ms per step while waiting; the simulated time a wait may take at most. */
const STEP_MS = 5;
const WAIT_MS_MAX = 30_000;

/** A real event-loop turn, taken before the trap is set: the test's own, for the engines' real file I/O. */
const realTurn = setImmediate;

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0).reverse()) cleanup();
});

async function runUntil(scheduler: SimScheduler, done: () => boolean, what: string): Promise<void> {
  const deadlineMs = scheduler.nowMs + WAIT_MS_MAX;
  while (!done() && scheduler.nowMs < deadlineMs) {
    await scheduler.run(scheduler.nowMs + STEP_MS);
    await new Promise((resolve) => realTurn(resolve));
  }
  expect({ what, done: done() }).toEqual({ what, done: true });
}

/** Settles `promise` by running the simulation; throws what it rejected with. */
async function simulate<T>(scheduler: SimScheduler, promise: Promise<T>, what: string): Promise<T> {
  let outcome: { ok: true; value: T } | { ok: false; error: unknown } | null = null;
  promise.then((value) => (outcome = { ok: true, value }), (error) => (outcome = { ok: false, error }));
  await runUntil(scheduler, () => outcome !== null, what);
  const settled = outcome! as { ok: true; value: T } | { ok: false; error: unknown };
  if (!settled.ok) throw settled.error;
  return settled.value;
}

test('acks=all with replication factor 2 completes over the simulated network: progress reports travel it', async () => {
  const scheduler = new SimScheduler(new SeededRandom(11));
  const network = new SimNetwork(scheduler);
  const store = new MemoryStore({ seed: 3, clock: new SimClock(scheduler, new ProcessGate('store')) });
  const trap = new RealTimeTrap();
  trap.install();
  cleanups.push(() => trap.uninstall());

  const brokers: Broker[] = [];
  for (const nodeId of [1, 2]) {
    const host = `broker-${nodeId}`;
    const gate = new ProcessGate(host);
    const directory = tempDir();
    cleanups.push(() => rmSync(directory, { recursive: true, force: true }));
    const started = Broker.start({
      listenHost: host,
      listenPort: BROKER_PORT,
      nodeId,
      defaultReplicationFactor: 2,
      minInsyncReplicas: 2,
      cluster: { store, leaseMs: LEASE_MS, scanIntervalMs: SCAN_INTERVAL_MS },
      engine: { directory, log: { flush: { kind: 'none' } }, wal: { store, writerId: host, config: { uploadIntervalMs: 1 }, seed: nodeId } },
      clock: new SimClock(scheduler, gate),
      network: network.host(host, gate),
      random: new SeededRandom(100 + nodeId),
      log: () => {},
    });
    brokers.push(await simulate(scheduler, started, `${host} to start`));
  }
  const [first, second] = brokers as [Broker, Broker];
  await simulate(scheduler, first.context.topology.createTopic('t', 1, 2), 'the topic to be created');
  const leader = () => brokers.find((b) => b.context.engine.serves('t', 0));
  await runUntil(scheduler, () => leader() !== undefined, 'a leader to adopt the partition');
  const produced = await simulate(scheduler, leader()!.context.engine.produce('t', [{ value: 'replicated' }], { partition: 0, acks: 'all' }), 'the acks=all produce');
  expect(produced[0]!.offset).toBe(0);
  const follower = leader() === first ? second : first;
  await runUntil(scheduler, () => follower.context.engine.fetch('t', 0, 0).batches.length > 0, 'the follower to hold the record');

  for (const broker of brokers) await simulate(scheduler, broker.stop(), 'a broker to stop');
  trap.uninstall();
  expect(trap.reaches).toEqual([]);
});
