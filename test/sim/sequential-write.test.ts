import { expect, test } from 'bun:test';
import { isStoreError } from '../../src/store/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { SequentialWrite } from '../../src/store/object-store.ts';
import { StreamingUpload } from '../../src/store/streaming-upload.ts';
import { drainMicrotasks, ProcessGate, SimClock, SimScheduler } from '../../src/sim/scheduler.ts';
import { SequentialWrites } from '../../src/sim/sequential-writes.ts';
import { SimStoreView } from '../../src/sim/store.ts';
import { SeededRandom } from '../../src/util/random.ts';

const KEY = 'tier/topic/0/segment';
/** Long enough for every request of a test to be answered (S3 Express latency is a few ms). */
const SETTLE_MS = 5_000;

/** A shared store with S3 Express latency, one process's view of it offering sequential writes, and every put the store took. */
function setup(lostFinishRate = 0, viewSeed = 2) {
  const time = new SimScheduler(new SeededRandom(1));
  const puts: { key: string; body: string }[] = [];
  const store = new MemoryStore({ latency: 's3-express', clock: new SimClock(time, new ProcessGate('store')), onPut: (key, body) => puts.push({ key, body: text(body) ?? '' }) });
  const gate = new ProcessGate('broker-1#1');
  const writes = new SequentialWrites({ walStreamBytes: 1024, lostFinishRate });
  const view = new SimStoreView(store, gate, time, new SeededRandom(viewSeed), null, null, writes);
  // Microtasks first: a caller's chain (StreamingUpload's awaits) sends its request only once they ran.
  const run = async (ms = SETTLE_MS) => {
    await drainMicrotasks();
    await time.run(time.nowMs + ms);
    await drainMicrotasks();
  };
  return { time, store, gate, view, writes, puts, run };
}

function bytes(value: string): Uint8Array {
  return new TextEncoder().encode(value);
}

function text(value: Uint8Array | null): string | null {
  return value === null ? null : new TextDecoder().decode(value);
}

/** Opens a sequential write through `view`, letting simulated time pass until it is open. */
async function open(view: SimStoreView, run: () => Promise<unknown>, options: { ifNoneMatch?: '*' } = {}): Promise<SequentialWrite> {
  const opening = view.openSequentialWrite!(KEY, options);
  await run();
  return opening;
}

/** Settles `promise` while simulated time passes; what it settled with, or 'pending'. */
async function outcome<T>(promise: Promise<T>, run: () => Promise<unknown>): Promise<{ value: T } | { error: unknown } | 'pending'> {
  let settled: { value: T } | { error: unknown } | 'pending' = 'pending';
  promise.then(
    (value) => void (settled = { value }),
    (error: unknown) => void (settled = { error }),
  );
  await run();
  return settled;
}

test('a view without the run sequential writes offers none: StreamingUpload puts objects whole, as before', () => {
  const { store, gate, time } = setup();
  expect(new SimStoreView(store, gate, time, new SeededRandom(2)).openSequentialWrite).toBeUndefined();
});

test('nothing is visible until finish, which publishes the appends in order as one put', async () => {
  const { view, store, puts, run, writes } = setup();
  const write = await open(view, run);
  await outcome(write.append([bytes('ab'), bytes('c')]), run);
  await outcome(write.append([bytes('de')]), run);
  expect(store.peek(KEY)).toBeNull();
  const finished = await outcome(write.finish(), run);
  expect(finished).not.toBe('pending');
  expect('value' in (finished as object)).toBe(true);
  expect(text(store.peek(KEY))).toBe('abcde');
  expect(puts).toEqual([{ key: KEY, body: 'abcde' }]);
  expect(writes.stats).toEqual({ opened: 1, appends: 2, tierObjects: 1, walObjects: 0, failed: 0 });
});

test('ifNoneMatch is applied at finish: an object already under the key fails it, and stays', async () => {
  const { view, store, run } = setup();
  await outcome(store.put(KEY, bytes('first')), run);
  const write = await open(view, run, { ifNoneMatch: '*' });
  await outcome(write.append([bytes('second')]), run);
  const finished = await outcome(write.finish(), run);
  expect(finished !== 'pending' && 'error' in finished && isStoreError(finished.error, 'PreconditionFailed')).toBe(true);
  expect(text(store.peek(KEY))).toBe('first');
});

test("a dead process's append is never answered, and nothing of it is published", async () => {
  const { view, store, gate, run } = setup();
  const write = await open(view, run);
  const appending = write.append([bytes('lost')]);
  gate.kill();
  expect(await outcome(appending, run)).toBe('pending');
  expect(store.peek(KEY)).toBeNull();
});

test("a paused process's append waits, and is answered once it resumes", async () => {
  const { view, store, gate, run } = setup();
  const write = await open(view, run);
  gate.pause();
  const appending = write.append([bytes('held')]);
  expect(await outcome(appending, run)).toBe('pending');
  gate.resume();
  expect(await outcome(appending, run)).toEqual({ value: undefined });
  await outcome(write.finish(), run);
  expect(text(store.peek(KEY))).toBe('held');
});

test('a failed append leaves a hole: the write cannot be finished, only aborted', async () => {
  const { view, store, run, writes } = setup();
  const write = await open(view, run);
  store.injectFault({ operation: 'uploadPart', kind: 'Unavailable' });
  const appended = await outcome(write.append([bytes('x')]), run);
  expect(appended !== 'pending' && 'error' in appended && isStoreError(appended.error, 'Unavailable')).toBe(true);
  const finished = await outcome(write.finish(), run);
  expect(finished !== 'pending' && 'error' in finished && isStoreError(finished.error, 'InvalidArgument')).toBe(true);
  expect(await outcome(write.abort(), run)).toEqual({ value: undefined });
  expect(store.peek(KEY)).toBeNull();
  expect(writes.stats.failed).toBe(1);
});

test('a finish whose answer is lost after its effect is judged landed by reading the key back', async () => {
  const { view, store, run } = setup();
  const write = await open(view, run, { ifNoneMatch: '*' });
  await outcome(write.append([bytes('landed')]), run);
  store.injectFault({ operation: 'put', kind: 'Timeout', afterEffect: true });
  const finished = await outcome(write.finish(), run);
  expect(finished !== 'pending' && 'value' in finished).toBe(true);
  expect(text(store.peek(KEY))).toBe('landed');
});

test('every finish answer lost: each is judged by reading back, never a failed condition on its own landed object', async () => {
  const seen = { landed: 0, unsent: 0 };
  for (let seed = 1; seed <= 40; seed++) {
    const { view, store, run } = setup(1, seed);
    const write = await open(view, run, { ifNoneMatch: '*' });
    await outcome(write.append([bytes(`object ${seed}`)]), run);
    const finished = await outcome(write.finish(), run);
    expect(finished).not.toBe('pending');
    // Landed (its put reached the store on some attempt) and answered success, or never reached it and failed Unavailable.
    if (finished !== 'pending' && 'error' in finished) {
      expect(isStoreError(finished.error, 'Unavailable')).toBe(true);
      expect(store.peek(KEY)).toBeNull();
      seen.unsent++;
    } else {
      expect(text(store.peek(KEY))).toBe(`object ${seed}`);
      seen.landed++;
    }
  }
  // Three attempts, each reaching the store half the time: most land, a few never do.
  expect(seen.landed).toBeGreaterThan(0);
  expect(seen.unsent).toBeGreaterThan(0);
});

test("an append's bytes are taken as it reaches the store: a chunk changed before the append resolves is published changed", async () => {
  const { view, store, run } = setup();
  const write = await open(view, run);
  const chunk = bytes('sent');
  const appending = write.append([chunk]);
  chunk.set(bytes('SENT')); // breaks SequentialWrite's contract (chunks unchanged until the append resolves): the store must not hide it
  await outcome(appending, run);
  await outcome(write.finish(), run);
  expect(text(store.peek(KEY))).toBe('SENT');
});

test("StreamingUpload streams through the view's sequential write, and the object is published whole", async () => {
  const { view, store, run, writes } = setup();
  const upload = new StreamingUpload(view, KEY, { ifNoneMatch: '*' });
  for (const chunk of ['one ', 'two ', 'three']) await outcome(upload.write(bytes(chunk)), run);
  const finished = await outcome(upload.finish(), run);
  expect(finished !== 'pending' && 'value' in finished).toBe(true);
  expect(text(store.peek(KEY))).toBe('one two three');
  expect(writes.stats).toEqual({ opened: 1, appends: 1, tierObjects: 1, walObjects: 0, failed: 0 });
});
