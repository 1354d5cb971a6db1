import { describe, expect, test } from 'bun:test';
import { ControlStore } from '../../src/control/control-store.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { LeaseWrites } from '../../src/sim/lease-writes.ts';
import { ProcessGate, SIM_EPOCH_MS, SimClock, SimScheduler } from '../../src/sim/scheduler.ts';
import { SimStoreView } from '../../src/sim/store.ts';
import { renewalsAtLeaseEdge } from '../../src/sim/write-delays.ts';

function scheduler(): SimScheduler {
  return new SimScheduler(new SeededRandom(1));
}

describe('SimClock rate', () => {
  test('the monotonic clock and the timers run at the rate; a rate change never steps the clock', async () => {
    const time = scheduler();
    const clock = new SimClock(time, new ProcessGate('p'));
    clock.rate = 1.02;
    let firedAtMs: number | null = null;
    clock.setTimer(1_020, () => (firedAtMs = time.nowMs - SIM_EPOCH_MS));
    await time.run(SIM_EPOCH_MS + 500);
    expect(clock.monotonicMs()).toBeCloseTo(510, 6);
    clock.rate = 0.98;
    expect(clock.monotonicMs()).toBeCloseTo(510, 6);
    await time.run(SIM_EPOCH_MS + 2_000);
    expect(firedAtMs).not.toBeNull();
    expect(firedAtMs!).toBeCloseTo(1_000, 2); // set at the old rate: its simulated deadline stands
    expect(clock.monotonicMs()).toBeCloseTo(510 + 1_500 * 0.98, 6);
  });

  test('a timer never fires before its time on its clock, however small the remainder (no zero-delay spin)', async () => {
    const time = scheduler();
    const clock = new SimClock(time, new ProcessGate('p'));
    clock.rate = 1 + 137e-6;
    const dueMs = clock.monotonicMs() + 333.333;
    let timers = 0;
    const wait = (): void => {
      timers++;
      const remainingMs = dueMs - clock.monotonicMs();
      if (remainingMs > 0) clock.setTimer(remainingMs, wait);
    };
    wait();
    await time.run(SIM_EPOCH_MS + 1_000);
    expect(clock.monotonicMs()).toBeGreaterThanOrEqual(dueMs);
    expect(timers).toBeLessThan(5);
  });
});

describe('lease writes', () => {
  test('a broker record write is recorded with the process and moment it left, and the moment the store took it; its answer comes back later', async () => {
    const time = scheduler();
    const writes = new LeaseWrites(() => time.nowMs - SIM_EPOCH_MS);
    const clock = new SimClock(time, new ProcessGate('store'));
    const store = new MemoryStore({ latency: 's3-express', clock, onPut: (key, body) => writes.put(key, body) });
    const view = new SimStoreView(store, new ProcessGate('broker-3#2'), time, new SeededRandom(2), null, writes);
    view.controlWriteDelays = () => ({ toStoreMs: 100, backMs: 400 });
    const control = new ControlStore(view, '', { random: new SeededRandom(3) });
    let answeredMs: number | null = null;
    void control.put('brokers/3', { nodeId: 3, leaseMs: 1_000, renewedAtMs: 42 }).then(() => (answeredMs = time.nowMs - SIM_EPOCH_MS));
    void control.put('topics/t', { partitions: 1 }); // not a lease: not recorded
    await time.run(SIM_EPOCH_MS + 2_000);
    expect(writes.renewals).toHaveLength(1);
    const renewal = writes.renewals[0]!;
    expect(renewal).toMatchObject({ process: 'broker-3#2', node: 3, sentMs: 0, leaseMs: 1_000, resigned: false });
    expect(renewal.takenMs).toBeGreaterThan(100);
    expect(renewal.takenMs).toBeLessThan(150);
    expect(answeredMs!).toBeCloseTo(renewal.takenMs + 400, 6);
  });

  test('renewals at the lease edge land about a lease after the previous one did, or are answered as its self-fencing share ends', () => {
    const random = new SeededRandom(5);
    const edges = new Set<number>();
    for (let i = 0; i < 50; i++) {
      const delays = renewalsAtLeaseEdge(1_000, random);
      expect(delays('control/topics/t', 0)).toBeNull();
      expect(delays('control/brokers/1', 0)).toBeNull(); // the first: nothing to aim at
      const delay = delays('control/brokers/1', 0)!; // the previous one left, and landed, at 0
      const lands = delay.toStoreMs > 0;
      edges.add(lands ? 1_000 : 800);
      expect(Math.abs((lands ? delay.toStoreMs : delay.backMs) - (lands ? 1_000 : 800))).toBeLessThanOrEqual(30);
    }
    expect(edges.size).toBe(2);
  });
});
