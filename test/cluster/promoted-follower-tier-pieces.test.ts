// Review (issue 11, [T8] with [K3]), in a real cluster: a follower that (re)started following after
// the partition had tiered starts its log at the tiered end ([K2]); the leader's merges then swallow
// that offset into a bigger piece. Promoted, the follower keeps its log, whose active segment
// starts there, and dueMerge merges only pieces starting at a local segment's base: none of the
// pieces it tiers is ever merged until that segment rolls (segment.ms: 7 days by default), one
// tier record entry per piece (a piece per TIER_TAIL_MAX_MS for a quiet partition).
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker } from '../../src/broker/broker.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { TierRecords, tieredEnd } from '../../src/tier/tier-record.ts';
import { TIER_MERGE_RUN } from '../../src/tier/merge-plan.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(120_000);

/** Tier rounds and WAL GC run only when the test says. */
const NEVER_MS = 3_600_000;
/** Pieces the promoted leader tiers: merged, they would be two entries of level 1 and a few of level 0. */
const PROMOTED_PIECES = 3 * TIER_MERGE_RUN;

const root = mkdtempSync(join(tmpdir(), 'ferry-promoted-pieces-'));
const brokers: Broker[] = [];

afterAll(async () => {
  for (const broker of brokers) await broker.stop().catch(() => {});
  rmSync(root, { recursive: true, force: true });
});

async function startBroker(store: MemoryStore, nodeId: number): Promise<Broker> {
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId,
    cluster: { store, leaseMs: 1000, scanIntervalMs: 50 },
    engine: {
      directory: join(root, `broker-${nodeId}-${brokers.length}`),
      log: { flush: { kind: 'none' } },
      wal: { store, writerId: `broker-${nodeId}`, config: { uploadIntervalMs: 1 } },
      tier: { store, control: new ControlStore(store, ''), intervalMs: NEVER_MS, tailMaxBytes: 1, tailMaxMs: NEVER_MS }, // a piece of whatever is committed, each round
      walGcIntervalMs: NEVER_MS,
    },
  });
  brokers.push(broker);
  return broker;
}

test('[T8] a promoted follower whose log started at an old tiered end merges its pieces', async () => {
  const store = new MemoryStore();
  const records = new TierRecords(new ControlStore(store, ''));
  const first = await startBroker(store, 1);
  let second = await startBroker(store, 2);
  await first.context.topology.createTopic('quiet', 1, 2);
  const leaderOf = () => brokers.find((b) => b.context.engine.leads('quiet', 0));
  await until(() => leaderOf() !== undefined && [first, second].every((b) => b.context.engine.serves('quiet', 0)), 'a leader and a follower');
  const leader = leaderOf()!;
  const followerId = leader === first ? 2 : 1;
  const topicId = leader.context.topology.topicId('quiet')!;
  let written = 0;
  const piece = async (broker: Broker) => {
    await broker.context.engine.produce('quiet', [{ value: `r-${written++}` }], { partition: 0, acks: 'all' });
    await broker.context.engine.tierer!.tierDue();
  };
  for (let i = 0; i < 4; i++) await piece(leader);
  // The follower restarts: it follows again from the tiered end.
  const oldFollower = leader === first ? second : first;
  brokers.splice(brokers.indexOf(oldFollower), 1);
  await oldFollower.stop();
  second = await startBroker(store, followerId);
  await until(() => second.context.engine.serves('quiet', 0) && second.context.engine.logEndOffset('quiet', 0) === written, 'the restarted follower caught up');
  const followedFrom = tieredEnd(await records.read(topicId, 0));
  expect(followedFrom).toBeGreaterThan(0);
  for (let i = 0; i < 2 * TIER_MERGE_RUN; i++) await piece(leader); // merges swallow the offset it followed from
  await until(() => second.context.engine.logEndOffset('quiet', 0) === written, 'the follower caught up');
  const before = await records.read(topicId, 0);
  expect(before.segments.some((s) => s.baseOffset < followedFrom && s.endOffset > followedFrom)).toBe(true);
  brokers.splice(brokers.indexOf(leader), 1);
  await leader.stop(); // resigns: the follower is promoted and keeps its log [K3]
  await until(() => second.context.engine.leads('quiet', 0), 'the promotion');
  for (let i = 0; i < PROMOTED_PIECES; i++) await piece(second);
  const record = await records.read(topicId, 0);
  expect(tieredEnd(record)).toBe(written);
  // Failed while dueMerge wanted a piece at a segment's base: every piece of the promoted leader stays an entry of its own (level 0).
  expect(record.segments.length - before.segments.length).toBeLessThan(TIER_MERGE_RUN);
});
