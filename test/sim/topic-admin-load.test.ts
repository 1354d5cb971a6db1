import { expect, test } from 'bun:test';
import type { SimAdmin } from '../../src/sim/client/index.ts';
import type { Outcome } from '../../src/sim/history.ts';
import { TopicAdminLoad } from '../../src/sim/topic-admin-load.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { SeededRandom } from '../../src/util/random.ts';

/** Draws the given values in turn, then values that end the run (a wait past the chaos). */
class ScriptedRandom extends SeededRandom {
  readonly #values: number[];

  constructor(values: number[]) {
    super(0);
    this.#values = [...values];
  }

  override next(): number {
    return this.#values.shift() ?? 0.999_999;
  }
}

/**
 * The draws of one CreatePartitions of t0 from 5 to 7 at once: the run has admin operations (0),
 * the first wait is 0 ms (0), topic t0 (0), CreatePartitions (0.6), two more partitions (0.5).
 */
const CREATE_PARTITIONS_TO_7 = [0, 0, 0, 0.6, 0.5];

/** A TopicAdminLoad whose one CreatePartitions is held until `answer` is called, as a paused broker holds it. */
async function heldCreatePartitions() {
  const clock = new ManualClock();
  const topics = new Map([['t0', 5]]);
  let over = false;
  let answer: (outcome: Outcome) => void = () => {};
  const asked: number[] = [];
  let sent: () => void = () => {};
  const sending = new Promise<void>((resolve) => void (sent = resolve));
  const admin = {
    createPartitions: (_topic: string, count: number) =>
      new Promise<Outcome>((resolve) => {
        asked.push(count);
        answer = resolve;
        sent();
      }),
  } as unknown as SimAdmin;
  const load = new TopicAdminLoad({
    admin,
    clock,
    random: new ScriptedRandom(CREATE_PARTITIONS_TO_7),
    topics,
    chaosMs: 10_000,
    over: () => over,
    recreating: () => false,
    log: () => {},
  });
  const running = load.run();
  clock.advance(0); // the first wait: the CreatePartitions is sent
  await sending;
  expect(asked).toEqual([7]);
  return { load, topics, running, endChaos: () => void (over = true), answer: (outcome: Outcome) => answer(outcome) };
}

// Seed 40068: a CreatePartitions of t0 to 7 sent to a broker paused until the quiet was answered
// (ok) 10 ms after the quiet began; the probes had already been listed from 5 partitions, so 5 and 6
// were never probed. The probes now wait while an operation is in flight (Workload.#settleTopics).
test('a CreatePartitions sent in the chaos and answered after it is in flight until answered, and then grows its topic', async () => {
  const { load, topics, running, endChaos, answer } = await heldCreatePartitions();
  endChaos();
  expect(load.inFlight).toBe(true);
  expect(topics.get('t0')).toBe(5); // what the probes saw at seed 40068
  answer({ ok: true });
  await running;
  expect(load.inFlight).toBe(false);
  expect(topics.get('t0')).toBe(7);
  expect([...load.unsettled]).toEqual([]);
});

test('a CreatePartitions in flight at the end of the chaos that times out leaves its topic to be settled from Metadata', async () => {
  const { load, topics, running, endChaos, answer } = await heldCreatePartitions();
  endChaos();
  expect(load.inFlight).toBe(true);
  answer({ ok: false, error: 'REQUEST_TIMED_OUT', answered: false });
  await running;
  expect(load.inFlight).toBe(false);
  expect(topics.get('t0')).toBe(5);
  expect([...load.unsettled]).toEqual(['t0']);
});
