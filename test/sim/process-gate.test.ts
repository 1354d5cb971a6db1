import { describe, expect, test } from 'bun:test';
import { SeededRandom } from '../../src/util/random.ts';
import { ProcessGate, SimScheduler } from '../../src/sim/scheduler.ts';

/**
 * A resumed process works off its backlog one callback per turn (seed 550485: a broker resumed
 * from SIGSTOP applied a batch and, later in the same backlog, let its log go; run as one event,
 * the harness never saw the log hold the batch, and acks-all-min-insync took the follower that
 * did hold it for one that did not).
 */
describe('ProcessGate backlog after a pause', () => {
  /** A process whose log end two held store answers move: the first to 69, the second (a release) to nothing. */
  function pausedProcess(scheduler: SimScheduler) {
    const gate = new ProcessGate('broker-2#2', scheduler);
    const state = { end: 67 as number | null };
    const seen: (number | null)[] = [];
    scheduler.afterEvent = () => void seen.push(state.end);
    gate.pause();
    void gate.settle(Promise.resolve()).then(() => void (state.end = 69)); // the tail's apply
    void gate.settle(Promise.resolve()).then(() => void (state.end = null)); // the lease lapse's release
    return { gate, state, seen };
  }

  test('each held callback runs in an event of its own, its microtasks before the next: the harness sees every state between', async () => {
    const scheduler = new SimScheduler(new SeededRandom(1));
    const { gate, state, seen } = pausedProcess(scheduler);
    await scheduler.run(scheduler.nowMs + 10); // settles the two answers into the paused gate
    expect(state.end).toBe(67);
    scheduler.schedule(5, () => gate.resume());
    seen.length = 0;
    await scheduler.run(scheduler.nowMs + 20);
    expect(state.end).toBeNull();
    expect(seen).toContain(69);
  });

  test('what arrives while the backlog lasts runs after it, in order', async () => {
    const scheduler = new SimScheduler(new SeededRandom(2));
    const gate = new ProcessGate('p', scheduler);
    const order: string[] = [];
    gate.pause();
    gate.deliver(() => order.push('held 1'));
    gate.deliver(() => order.push('held 2'));
    gate.resume();
    gate.deliver(() => order.push('arrived after resume'));
    await scheduler.run(scheduler.nowMs + 1);
    expect(order).toEqual(['held 1', 'held 2', 'arrived after resume']);
  });

  test('paused again mid-backlog it stops, and a resume goes on from there; killed, the rest is never run', async () => {
    const scheduler = new SimScheduler(new SeededRandom(3));
    const gate = new ProcessGate('p', scheduler);
    const order: string[] = [];
    gate.pause();
    gate.deliver(() => {
      order.push('first');
      gate.pause();
    });
    gate.deliver(() => order.push('second'));
    gate.deliver(() => order.push('third'));
    gate.resume();
    await scheduler.run(scheduler.nowMs + 1);
    expect(order).toEqual(['first']);
    gate.resume();
    await scheduler.run(scheduler.nowMs + 2);
    expect(order).toEqual(['first', 'second', 'third']);

    const killed = new ProcessGate('q', scheduler);
    const ran: string[] = [];
    killed.pause();
    killed.deliver(() => {
      ran.push('one');
      killed.kill();
    });
    killed.deliver(() => ran.push('two'));
    killed.resume();
    await scheduler.run(scheduler.nowMs + 3);
    expect(ran).toEqual(['one']);
  });
});
