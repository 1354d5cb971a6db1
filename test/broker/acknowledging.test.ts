// Broker.acknowledging tells whether a cluster broker acknowledges writes now: not while its lease
// may have lapsed, nor after a renewal until a scan confirmed what it still leads [C1]. A broker
// cut off from the control store keeps leading, in its engine, partitions others may have taken
// meanwhile; this says those are not its own to acknowledge (the simulation audits the brokers'
// logs only once every broker acknowledges again: seed 159 read such a broker as a second leader).
import { afterEach, expect, test } from 'bun:test';
import { Broker } from '../../src/broker/broker.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { tempDir } from '../support/temp-dir.ts';

const LEASE_MS = 900;
/** Renewals run every leaseMs / 3; this many failed in a row outlast the lease's held share. */
const RENEWALS_FAILED = 3;
/** Steps of the manual clock, with the event loop let through between them (the store answers in promises). */
const STEP_MS = 10;

const running: Broker[] = [];
afterEach(async () => {
  for (const broker of running.splice(0)) await broker.stop().catch(() => {});
});

async function advance(clock: ManualClock, ms: number): Promise<void> {
  for (let elapsed = 0; elapsed < ms; elapsed += STEP_MS) {
    clock.advance(STEP_MS);
    for (let turn = 0; turn < 20; turn++) await Promise.resolve();
  }
}

test('a cluster broker stops acknowledging once its lease lapses, and acknowledges again after a renewal and a scan', async () => {
  const store = new MemoryStore();
  const clock = new ManualClock();
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    clock,
    cluster: { store, leaseMs: LEASE_MS, scanIntervalMs: 100 },
    engine: { directory: tempDir(), log: { flush: { kind: 'none' } }, wal: { store, writerId: 'broker-1', config: { uploadIntervalMs: 2 } } },
  });
  running.push(broker);
  expect(broker.acknowledging).toBe(true);

  store.injectFault({ operation: 'put', kind: 'Unavailable', keyPrefix: 'control/brokers/', count: RENEWALS_FAILED });
  await advance(clock, LEASE_MS);
  expect(broker.acknowledging).toBe(false); // its lease may have ended in others' eyes

  await advance(clock, LEASE_MS); // the next renewal succeeds, then the confirming scan
  expect(broker.acknowledging).toBe(true);
});

test('a single broker always acknowledges', async () => {
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    clock: new ManualClock(),
    engine: { directory: tempDir(), log: { flush: { kind: 'none' } } },
  });
  running.push(broker);
  expect(broker.acknowledging).toBe(true);
});
