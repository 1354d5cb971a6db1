// This broker's own lease and others' liveness, on a manual clock (docs/cluster-protocol.md [C1]).
import { expect, test } from 'bun:test';
import { Lease } from '../../src/cluster/lease.ts';
import { Liveness } from '../../src/cluster/liveness.ts';
import { ManualClock } from '../../src/util/clock.ts';

test('the lease is held from the start of the last successful renewal until before leaseMs passed (finding 9)', () => {
  const clock = new ManualClock();
  const lease = new Lease(1000, clock);
  expect(lease.held()).toBe(false); // never renewed
  const first = lease.renewalStarting();
  clock.advance(300); // a slow write: the lease still counts from its start
  lease.renewed(first);
  expect(lease.held()).toBe(false); // the first renewal waits for a scan's confirmation
  lease.confirm(lease.lapse);
  expect(lease.held()).toBe(true);
  clock.advance(499); // 799 ms after the renewal started
  expect(lease.held()).toBe(true);
  clock.advance(1); // 800: a safety margin before anyone could count it dead at 1000
  expect(lease.held()).toBe(false);
  // A renewal that started after the lapse: held again only once a scan confirmed what is still ours.
  const late = lease.renewalStarting();
  lease.renewed(late);
  expect(lease.awaitingConfirmation).toBe(true);
  expect(lease.renewedInTime()).toBe(true);
  expect(lease.held()).toBe(false);
  lease.confirm(lease.lapse);
  expect(lease.held()).toBe(true);
  // Renewals in time keep it held without a new confirmation.
  clock.advance(333);
  lease.renewed(lease.renewalStarting());
  clock.advance(700);
  expect(lease.held()).toBe(true);
  // A renewal that started in time but completed after the lapse: others may not have seen it in time.
  const slow = lease.renewalStarting(); // 700 ms into the lease
  clock.advance(200);
  expect(lease.held()).toBe(false);
  lease.renewed(slow);
  expect(lease.held()).toBe(false);
  expect(lease.awaitingConfirmation).toBe(true);
  // A confirmation that began before a later lapse does not end that one.
  const begun = lease.lapse;
  clock.advance(900);
  lease.renewed(lease.renewalStarting());
  lease.confirm(begun);
  expect(lease.held()).toBe(false);
  lease.confirm(lease.lapse);
  expect(lease.held()).toBe(true);
});

test('another broker is alive while its record changed within its lease on the local clock, whatever its wall clock says (finding 9)', () => {
  const clock = new ManualClock();
  const liveness = new Liveness(clock);
  const skewed = { nodeId: 2, renewedAtMs: 42, leaseMs: 1000 }; // its wall clock is decades behind ours
  liveness.observe([{ value: skewed, etag: 'v1' }]);
  expect(liveness.isAlive(skewed)).toBe(true);
  clock.advance(900);
  liveness.observe([{ value: { ...skewed, renewedAtMs: 43 }, etag: 'v2' }]); // renewed
  clock.advance(900);
  expect(liveness.isAlive(skewed)).toBe(true);
  clock.advance(100); // 1000 ms since the change was seen: still within the lease
  expect(liveness.isAlive(skewed)).toBe(true);
  clock.advance(1);
  liveness.observe([{ value: { ...skewed, renewedAtMs: 43 }, etag: 'v2' }]); // unchanged
  expect(liveness.isAlive(skewed)).toBe(false); // dead once leaseMs passed without a renewal, no grace factor
  liveness.observe([{ value: { ...skewed, renewedAtMs: 0 }, etag: 'v3' }]);
  expect(liveness.isAlive({ ...skewed, renewedAtMs: 0 })).toBe(false); // resigned
});
