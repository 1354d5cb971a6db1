import { expect, test } from 'bun:test';
import { formatViolation } from '../../src/sim/checker.ts';
import { POWER_LOSS_AFTER_GC } from '../../src/sim/embedded-faults.ts';
import { runSeed } from '../../src/sim/run.ts';

/** An embedded seed whose run draws power losses after WAL GC's deletes (embedded-scenario.ts). */
const EMBEDDED_SEED = 36;
/** A run's application is acknowledged hundreds of calls; fewer than this would say the shape stopped producing. */
const ACKED_CALLS_MIN = 50;

test('an embedded seed runs a stand-alone engine that tiers, collects its WAL and loses power, and the checker finds nothing', async () => {
  const result = await runSeed({ seed: EMBEDDED_SEED });
  const { history } = result;
  expect(result.scenario.embedded).not.toBeNull();
  expect(result.violations.map((violation) => formatViolation(violation, history))).toEqual([]);
  // What the shape is there for: acks=all acknowledged, the tier end moved, WAL objects collected, power lost right after a collection.
  expect(history.ops.filter((op) => op.kind === 'produce' && op.acks === -1 && op.outcome.ok).length).toBeGreaterThan(ACKED_CALLS_MIN);
  expect(history.tierWrites?.length ?? 0).toBeGreaterThan(0);
  expect(history.walDeletes?.length ?? 0).toBeGreaterThan(0);
  expect(history.faults.some((fault) => fault.fault === POWER_LOSS_AFTER_GC)).toBe(true);
  expect(history.shape).toMatchObject({ brokers: 1, cluster: false });
}, 60_000);

test("an embedded seed's broker twin (embedded: null) is the broker run its other draws give", async () => {
  const twin = await runSeed({ seed: EMBEDDED_SEED, scenario: { embedded: null } });
  expect(twin.scenario.embedded).toBeNull();
  expect(twin.history.ops.some((op) => op.client === 'app')).toBe(false);
}, 60_000);
