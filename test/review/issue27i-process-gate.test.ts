import { expect, test } from 'bun:test';
import { ProcessGate, SimClock, SimScheduler } from '../../src/sim/scheduler.ts';
import { SeededRandom } from '../../src/util/random.ts';

/** Review 27i: attacks on ProcessGate's one-callback-per-event backlog (cfee00e). */

/** A scheduler whose uncaught errors are recorded, as the simulation's run records them (a violation). */
function recordingScheduler(seed: number): { scheduler: SimScheduler; uncaught: unknown[] } {
  const scheduler = new SimScheduler(new SeededRandom(seed));
  const uncaught: unknown[] = [];
  scheduler.onUncaught = (error) => void uncaught.push(error);
  return { scheduler, uncaught };
}

// FINDING: a backlog callback that pauses and resumes its own gate (synchronously, in one callback)
// starts a second drain chain: resume() sees #draining false (it is cleared before the callback
// runs) and schedules a turn, and the callback's finally schedules another. The two chains take
// the backlog between them, and the one that finds it empty shifts `undefined` and calls it: a
// TypeError thrown out of the gate, recorded by the run as a violation of the code under test.
test('a backlog callback that pauses and resumes its gate: every held callback runs once, nothing else is called', async () => {
  const { scheduler, uncaught } = recordingScheduler(11);
  const gate = new ProcessGate('p', scheduler);
  const order: string[] = [];
  gate.pause();
  gate.deliver(() => {
    order.push('first');
    gate.pause(); // e.g. a harness hook run from the process's callback: SIGSTOP, SIGCONT
    gate.resume();
  });
  gate.deliver(() => order.push('second'));
  gate.resume();
  await scheduler.run(scheduler.nowMs + 5);
  expect({ order, uncaught: uncaught.map(String) }).toEqual({ order: ['first', 'second'], uncaught: [] });
});

// FINDING (regression in cfee00e): a timer the process clears can still run. While a resumed
// backlog lasts, a timer that falls due is no longer run at its event but queued behind the
// backlog; the Timer the process holds is that scheduler event, already fired, so clearing it
// from a later backlog callback changes nothing and the cleared callback runs. Here one held
// callback sets a zero-delay timer (clock.immediate: a setImmediate, or a setTimeout(0)) and the
// next held callback clears it. Before cfee00e the backlog ran inside resume(), the clear came
// before the timer's event, and it never ran; in Bun and Node a cleared timer never runs.
test('a zero-delay timer set by one backlog callback and cleared by the next never runs', async () => {
  const { scheduler, uncaught } = recordingScheduler(12);
  const gate = new ProcessGate('broker-1#1', scheduler);
  const clock = new SimClock(scheduler, gate);
  const order: string[] = [];
  let retry: ReturnType<SimClock['immediate']> | null = null;
  gate.pause();
  gate.deliver(() => {
    order.push('request failed: retry at once');
    retry = clock.immediate(() => order.push('retry sent'));
  });
  gate.deliver(() => {
    order.push('answer arrived after all: retry cancelled');
    retry?.cancel();
  });
  scheduler.schedule(10, () => gate.resume());
  await scheduler.run(scheduler.nowMs + 20);
  expect({ order, uncaught }).toEqual({ order: ['request failed: retry at once', 'answer arrived after all: retry cancelled'], uncaught: [] });
});

// FINDING (older than cfee00e, kept by it): the same for a timer that fell due while the process
// was stopped. Its callback is held; a held callback before it clears it; it runs all the same.
// A real process after SIGCONT runs its expired timers only if nothing cleared them first.
test('a timer that fell due during a pause and is cleared by an earlier held callback never runs', async () => {
  const { scheduler, uncaught } = recordingScheduler(13);
  const gate = new ProcessGate('broker-1#1', scheduler);
  const clock = new SimClock(scheduler, gate);
  const order: string[] = [];
  const expiry = clock.setTimer(5, () => order.push('lease expired'));
  gate.pause();
  scheduler.schedule(1, () =>
    gate.deliver(() => {
      order.push('renewal answer');
      expiry.cancel();
    }),
  );
  scheduler.schedule(10, () => gate.resume());
  await scheduler.run(scheduler.nowMs + 20);
  expect({ order, uncaught }).toEqual({ order: ['renewal answer'], uncaught: [] });
});

// Held: an exception in one backlog callback does not stop the rest, and goes to onUncaught once.
test('a throwing backlog callback is reported once and the rest of the backlog still runs, in order', async () => {
  const { scheduler, uncaught } = recordingScheduler(14);
  const gate = new ProcessGate('p', scheduler);
  const order: string[] = [];
  gate.pause();
  gate.deliver(() => order.push('1'));
  gate.deliver(() => {
    order.push('2');
    throw new Error('boom');
  });
  gate.deliver(() => order.push('3'));
  gate.resume();
  gate.deliver(() => order.push('4 (after resume)'));
  await scheduler.run(scheduler.nowMs + 5);
  expect({ order, uncaught: uncaught.map(String) }).toEqual({ order: ['1', '2', '3', '4 (after resume)'], uncaught: ['Error: boom'] });
});

// Held: a long random schedule of deliveries, pauses, resumes (outside the gate's callbacks) and a
// final kill: FIFO order, each callback at most once, every one before the kill exactly once when
// the process was running long enough, none after the kill, one callback per event.
test('random deliveries, pauses and resumes: FIFO, at most once, none after a kill, one per event', async () => {
  for (let seed = 1; seed <= 40; seed++) {
    const { scheduler, uncaught } = recordingScheduler(seed);
    const random = new SeededRandom(seed * 7919);
    const gate = new ProcessGate('p', scheduler);
    const ran: number[] = [];
    const perEvent: number[] = [];
    let inEvent = 0;
    scheduler.afterEvent = () => {
      perEvent.push(inEvent);
      inEvent = 0;
    };
    let next = 0;
    let killedAfter = -1;
    for (let step = 0; step < 200; step++) {
      const atMs = Math.floor(random.next() * 100);
      const roll = random.next();
      if (roll < 0.7) {
        scheduler.schedule(atMs, () => {
          const id = next++;
          gate.deliver(() => {
            inEvent++;
            ran.push(id);
            if (id % 5 === 0) void Promise.resolve().then(() => gate.deliver(() => ran.push(-1))); // a microtask delivering again
          });
        });
      } else if (roll < 0.85) scheduler.schedule(atMs, () => gate.state === 'running' && gate.pause());
      else scheduler.schedule(atMs, () => gate.state === 'paused' && gate.resume());
    }
    scheduler.schedule(150, () => {
      if (gate.state === 'paused') gate.resume();
    });
    scheduler.schedule(300, () => {
      killedAfter = next;
      gate.kill();
      scheduler.schedule(1, () => gate.deliver(() => ran.push(-2)));
    });
    await scheduler.run(scheduler.nowMs + 400);
    const ids = ran.filter((id) => id >= 0);
    expect(uncaught).toEqual([]);
    expect(ids).toEqual([...Array(killedAfter).keys()]); // every delivery ran once, in order (all ran before the kill at 300)
    expect(ran.includes(-2)).toBe(false);
    expect(Math.max(0, ...perEvent)).toBeLessThanOrEqual(1);
  }
});
