import { describe, expect, test } from 'bun:test';
import { Engine, isFerryError } from '../../src/engine/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { decode } from '../support/batches.ts';
import { tempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

const WAL = { uploadBytes: 16 * 1024, uploadIntervalMs: 2 };

function leader(store: ObjectStore, minInsyncReplicas = 1): Promise<Engine> {
  return Engine.open({ directory: tempDir(), minInsyncReplicas, wal: { store, writerId: 'node-1', config: WAL } });
}

function replica(store: ObjectStore, directory = tempDir('ferry-replica-')): Promise<Engine> {
  return Engine.open({ directory, follow: { store, writerId: 'node-1', follower: { pollIntervalMs: 2 } } });
}

/** The high watermark of t-0 on `ferry`, or -1 while the replica has not learnt the topic. */
function highWatermark(ferry: Engine): number {
  return ferry.topics().some((t) => t.name === 't') ? ferry.fetch('t', 0, 0).highWatermark : -1;
}

/** On a manual clock the WAL's upload timer never fires: let the pending appends land, then upload and wait for the object. */
async function shipNow(ferry: Engine): Promise<void> {
  await Bun.sleep(0);
  await ferry.wal!.flush();
  await Bun.sleep(0); // the durability callbacks
}

describe('replicated mode (embedded)', () => {
  test('a read replica learns topics from the WAL and serves consumers up to the high watermark', async () => {
    const store = new MemoryStore({ latency: 's3-express', seed: 1 });
    const primary = await leader(store);
    primary.createTopic('orders', { partitions: 2 });
    const secondary = await replica(store);
    primary.attachReplica(secondary, 'node-2');
    const produced = await primary.produce(
      'orders',
      Array.from({ length: 20 }, (_, i) => ({ value: `o${i}` })),
      { partition: 1 },
    );
    await until(() => secondary.topics().length > 0, 'the replica to learn the topic');
    const controller = new AbortController();
    const seen: string[] = [];
    for await (const record of secondary.consume('orders', { partition: 1, signal: controller.signal })) {
      seen.push(decode(record.value)!);
      if (seen.length === 20) controller.abort();
    }
    expect(seen).toEqual(produced.map((_, i) => `o${i}`));
    expect(secondary.topics()).toEqual([{ name: 'orders', id: primary.topics()[0]!.id, partitions: 2, config: {} }]); // partition 1 implies partitions 0..1
    let caught: unknown;
    try {
      await secondary.produce('orders', [{ value: 'x' }], { partition: 1 });
    } catch (error) {
      caught = error;
    }
    expect(isFerryError(caught, 'NotLeader')).toBe(true);
    await primary.close();
    await secondary.close();
  });

  test('acks=all with min.insync.replicas=2 waits until a replica applied the records', async () => {
    const store = new MemoryStore();
    const clock = new ManualClock(); // time stands still: only a replica's progress can commit, never a timer
    const primary = await Engine.open({ directory: tempDir(), clock, minInsyncReplicas: 2, wal: { store, writerId: 'node-1', config: WAL } });
    primary.createTopic('t');
    let acknowledged = false;
    const pending = primary.produce('t', [{ value: 'needs a replica' }]).then(() => (acknowledged = true));
    await shipNow(primary);
    expect(primary.wal!.durableOffset(primary.topics().find((t) => t.name === 't')!.id, 0)).toBe(1);
    expect(acknowledged).toBe(false); // durable in the WAL, but no replica has it yet
    expect(primary.fetch('t', 0, 0).highWatermark).toBe(0);
    const secondary = await replica(store);
    primary.attachReplica(secondary, 'node-2');
    await pending;
    expect(primary.fetch('t', 0, 0).highWatermark).toBe(1);
    const next = primary.produce('t', [{ value: 'next' }]);
    await shipNow(primary);
    const [second] = await next;
    expect(second!.offset).toBe(1);
    expect(secondary.fetch('t', 0, 0).highWatermark).toBeGreaterThanOrEqual(1);
    await primary.close();
    await secondary.close();
  });

  test('a follower never serves past the leader high watermark it knows', async () => {
    const store = new MemoryStore();
    const primary = await leader(store, 3); // needs two replicas: with one, the high watermark cannot move
    primary.createTopic('t');
    void primary.produce('t', [{ value: 'a' }, { value: 'b' }]).catch(() => {});
    const secondary = await replica(store);
    primary.attachReplica(secondary, 'node-2');
    await until(() => secondary.follower!.stats().framesApplied > 0, 'the replica to apply');
    expect(secondary.fetch('t', 0, 0).highWatermark).toBe(0);
    expect(secondary.fetch('t', 0, 0).batches).toEqual([]);
    await primary.close();
    await secondary.close();
  });

  test('a replica restarted from its directory resumes where it was', async () => {
    const store = new MemoryStore();
    const primary = await leader(store);
    primary.createTopic('t');
    const directory = tempDir('ferry-replica-');
    let secondary = await replica(store, directory);
    await primary.produce(
      't',
      Array.from({ length: 50 }, (_, i) => ({ value: `m${i}` })),
    );
    await until(() => highWatermark(secondary) === 50, 'the first catch-up');
    await secondary.close();
    await primary.produce(
      't',
      Array.from({ length: 50 }, (_, i) => ({ value: `n${i}` })),
    );
    secondary = await replica(store, directory);
    await until(() => highWatermark(secondary) === 100, 'the resumed catch-up');
    const values = secondary.fetch('t', 0, 0, { maxBytes: 1 << 20 }).batches.flatMap((b) => [...b.records()].map((r) => decode(r.value)));
    expect(values.length).toBe(100);
    expect(values[99]).toBe('n49');
    await primary.close();
    await secondary.close();
  });
});

test('metrics: WAL durability and follower lag land in the registry', async () => {
  const { MetricsRegistry } = await import('../../src/metrics/index.ts');
  const store = new MemoryStore();
  const leaderMetrics = new MetricsRegistry();
  const followerMetrics = new MetricsRegistry();
  const primary = await Engine.open({ directory: tempDir(), metrics: leaderMetrics, wal: { store, writerId: 'node-1', config: WAL } });
  primary.createTopic('t');
  const secondary = await Engine.open({ directory: tempDir('ferry-replica-'), metrics: followerMetrics, follow: { store, writerId: 'node-1', follower: { pollIntervalMs: 2 } } });
  primary.attachReplica(secondary, 'node-2');
  await primary.produce('t', [{ value: 'x' }]);
  await until(() => highWatermark(secondary) === 1, 'the replica');
  const leaderText = leaderMetrics.renderPrometheus();
  expect(leaderText).toContain('ferry_wal_produce_to_durable_seconds_count 1');
  expect(leaderText).toMatch(/ferry_wal_objects_total [1-9]/);
  const followerText = followerMetrics.renderPrometheus();
  expect(followerText).toMatch(/ferry_follower_objects_total [1-9]/);
  expect(followerText).toContain('ferry_follower_lag_offsets 0');
  expect(followerText).toContain('ferry_partitions 1');
  expect(leaderText).toContain('ferry_partition_leaders 1');
  expect(leaderText).toContain('ferry_replica_lag_offsets{replica="node-2"} 0');
  await primary.close();
  await secondary.close();
});
