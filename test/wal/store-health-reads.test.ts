// src/wal/store-health.ts, the read track: a follower's reads that go unanswered count as the WAL
// store failing from when the first is seen failing, until a read sent at or after it is answered
// (docs/cluster-protocol.md [C1], "as a follower"); only a read, the probe's included, ends it. Seed 175
// (test/sim/found-bugs.test.ts) flapped every broker's flag when only writes ended a read failure:
// stray timeouts among answered reads flagged followers that write nothing but the probe.
import { expect, test } from 'bun:test';
import { StoreError } from '../../src/store/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { reportingReads, WalStoreHealth } from '../../src/wal/store-health.ts';

const settle = () => new Promise((resolve) => setTimeout(resolve, 0));

test('an unanswered read counts from when it is seen, and a later answered read ends it', () => {
  const clock = new ManualClock();
  const health = new WalStoreHealth(new MemoryStore(), 'k', clock);
  const sentMs = clock.monotonicMs();
  clock.advance(1500); // the read hung for longer than a lease before it timed out
  health.readUnanswered(sentMs);
  expect(health.failingForMs()).toBe(0); // seen just now: no lease of failure yet
  clock.advance(400);
  expect(health.failingForMs()).toBe(400);
  health.readAnswered(sentMs - 1); // sent before the failed one: older news
  expect(health.failingForMs()).toBe(400);
  health.readAnswered(clock.monotonicMs()); // sent after it: the store answers
  expect(health.failingForMs()).toBe(0);
});

test('an unanswered read sent before an answered one starts nothing; a landed write does not end a read failure', () => {
  const clock = new ManualClock();
  const health = new WalStoreHealth(new MemoryStore(), 'k', clock);
  const earlyMs = clock.monotonicMs();
  clock.advance(10);
  health.readAnswered(clock.monotonicMs());
  health.readUnanswered(earlyMs); // a reply lost before a later read was answered
  clock.advance(2000);
  expect(health.failingForMs()).toBe(0);
  health.readUnanswered(clock.monotonicMs());
  clock.advance(1000);
  expect(health.failingForMs()).toBe(1000);
  health.writeLanded(clock.monotonicMs()); // writes land, reads still fail (a read-only cut)
  expect(health.failingForMs()).toBe(1000);
});

test("recheck reads while reads fail: the probe key's absence is an answer that ends the failure, a cut store's silence is not", async () => {
  const clock = new ManualClock();
  const inner = new MemoryStore();
  let cut = true;
  const store = new Proxy(inner, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => (cut && name === 'head' ? Promise.reject(new StoreError('AccessDenied', 'injected')) : (value as (...a: unknown[]) => unknown).apply(target, args));
    },
  });
  const health = new WalStoreHealth(store, 'probe', clock);
  health.readUnanswered(clock.monotonicMs());
  clock.advance(10);
  health.recheck();
  await settle();
  clock.advance(10);
  expect(health.failingForMs()).toBe(20); // refused: still failing (AccessDenied is no answer)
  cut = false;
  health.recheck();
  await settle();
  expect(health.failingForMs()).toBe(0);
  expect(await inner.head('probe')).toBeNull(); // a read: nothing was written for it
});

test('reportingReads tells each GET, HEAD and LIST as answered (absent objects too) or unanswered (Timeout, Unavailable, Throttled, AccessDenied)', async () => {
  const clock = new ManualClock();
  const inner = new MemoryStore();
  await inner.put('present', new Uint8Array([1]));
  const seen: string[] = [];
  let failWith: StoreError | null = null;
  const faulty = new Proxy(inner, {
    get(target, name) {
      const value: unknown = Reflect.get(target, name, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => (failWith === null ? (value as (...a: unknown[]) => unknown).apply(target, args) : Promise.reject(failWith));
    },
  });
  const store = reportingReads(faulty, clock, { answered: () => seen.push('answered'), unanswered: () => seen.push('unanswered') });
  await store.get('present');
  await store.get('absent').catch(() => {}); // NotFound: an answer
  await store.head('absent');
  await store.list('');
  failWith = new StoreError('Timeout', 'injected');
  await store.get('present').catch(() => {});
  failWith = new StoreError('Unavailable', 'injected');
  await store.list('').catch(() => {});
  failWith = new StoreError('Throttled', 'injected'); // S3's 503 SlowDown
  await store.get('present').catch(() => {});
  failWith = new StoreError('AccessDenied', 'injected'); // revoked access
  await store.head('present').catch(() => {});
  failWith = new StoreError('InvalidArgument', 'injected'); // a bad request says nothing of the store
  await store.get('present').catch(() => {});
  failWith = null;
  await store.put('written', new Uint8Array([2])); // writes are not reads: not reported
  expect(seen).toEqual(['answered', 'answered', 'answered', 'answered', 'unanswered', 'unanswered', 'unanswered', 'unanswered']);
});
