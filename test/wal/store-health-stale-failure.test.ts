// src/wal/store-health.ts (review of 11908f9): a write that was sent before a later one landed,
// and fails only afterwards (an unreachable store's request fails up to seconds after it was sent:
// src/sim/store.ts UNREACHABLE_FAIL_MS_MAX, a lease in the simulation is 1-3 s), says nothing
// newer than that landing. Counting the failure from its own start made a healthy store look cut
// off for longer than a lease at once, and the next renewal raised storageFailing ([C1]):
// the broker stepped aside and others took its partitions over while its writes were landing.
import { expect, test } from 'bun:test';
import { MemoryStore } from '../../src/store/memory.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { WalStoreHealth } from '../../src/wal/store-health.ts';

const LEASE_MS = 1000;

test('a failure of a write sent before the last landing does not count the store as failing since it was sent', () => {
  const clock = new ManualClock();
  const health = new WalStoreHealth(new MemoryStore(), 'k', clock);
  const slowStartedMs = clock.monotonicMs(); // object 1's put, sent in a blip: it hangs, then fails
  clock.advance(100);
  const fastStartedMs = clock.monotonicMs(); // object 2's put, sent after the blip: it lands
  clock.advance(20);
  health.writeLanded(fastStartedMs);
  clock.advance(1_880);
  health.writeFailed(slowStartedMs); // object 1's answer, 2 s after it was sent
  expect(health.failingForMs()).toBeLessThan(LEASE_MS); // was 2000: flagged at once, on a store that takes writes
  expect(health.failingForMs()).toBe(0);
});

test('a failure of a write sent after the last landing still counts from its start', () => {
  const clock = new ManualClock();
  const health = new WalStoreHealth(new MemoryStore(), 'k', clock);
  const landedStartedMs = clock.monotonicMs();
  clock.advance(10);
  health.writeLanded(landedStartedMs);
  const failedStartedMs = clock.monotonicMs();
  clock.advance(1_500);
  health.writeFailed(failedStartedMs);
  expect(health.failingForMs()).toBe(1_500);
});

test('the other way round: a landing of a write sent before a failed one ends no failure, and a failure sent earlier moves its start back', () => {
  const clock = new ManualClock();
  const health = new WalStoreHealth(new MemoryStore(), 'k', clock);
  const slowStartedMs = clock.monotonicMs(); // object 1's put, sent before the cut: it lands late
  clock.advance(100);
  const cutStartedMs = clock.monotonicMs(); // object 2's put, sent into the cut: it fails
  clock.advance(50);
  health.writeFailed(cutStartedMs);
  clock.advance(50);
  health.writeLanded(slowStartedMs); // older news than the failure
  expect(health.failingForMs()).toBe(100);
  health.writeFailed(slowStartedMs + 50); // a put sent between the two, failing only now: the failure began then
  expect(health.failingForMs()).toBe(150);
  health.writeLanded(clock.monotonicMs()); // a put sent now lands: the store takes writes
  expect(health.failingForMs()).toBe(0);
});
