// [K3] A follower promoted to leader keeps its local log and applies only what it lacks from the
// chain: here the leader stops (resigning) after its follower applied everything, so the promotion
// applies nothing, and the new leader serves every acknowledged record at its offset, once.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker } from '../../src/broker/broker.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(60_000);

const RECORDS = 200;
const root = mkdtempSync(join(tmpdir(), 'ferry-promoted-'));
const brokers: Broker[] = [];

afterAll(async () => {
  for (const broker of brokers) await broker.stop().catch(() => {});
  rmSync(root, { recursive: true, force: true });
});

test('a promoted follower keeps its copy: the rebuild applies nothing it had, and every record is there once', async () => {
  const store = new MemoryStore();
  const lines = new Map<number, string[]>();
  for (const nodeId of [1, 2]) {
    lines.set(nodeId, []);
    brokers.push(
      await Broker.start({
        listenHost: '127.0.0.1',
        listenPort: 0,
        nodeId,
        log: (line) => lines.get(nodeId)!.push(line),
        cluster: { store, leaseMs: 2000, scanIntervalMs: 50 },
        engine: { directory: join(root, `broker-${nodeId}`), log: { flush: { kind: 'none' } }, wal: { store, writerId: `broker-${nodeId}`, config: { uploadIntervalMs: 2 } } },
      }),
    );
  }
  await brokers[0]!.context.topology.createTopic('kept', 1, 2);
  const leaderOf = () => brokers.find((b) => b.context.engine.leads('kept', 0));
  await until(() => leaderOf() !== undefined && brokers.every((b) => b.context.engine.serves('kept', 0)), 'a leader and a follower');
  const leader = leaderOf()!;
  const follower = brokers.find((b) => b !== leader)!;
  for (let i = 0; i < RECORDS; i += 10) {
    await leader.context.engine.produce(
      'kept',
      Array.from({ length: 10 }, (_, j) => ({ value: `r-${i + j}` })),
      { partition: 0, acks: 'all' },
    );
  }
  await until(() => follower.context.engine.logEndOffset('kept', 0) === RECORDS, 'the follower to apply everything');

  brokers.splice(brokers.indexOf(leader), 1);
  await leader.stop(); // resigns: the follower is promoted at its next scan
  await until(() => follower.context.engine.leads('kept', 0), 'the promotion');

  const said = lines.get(follower.context.nodeId)!;
  expect(said.some((line) => line.includes('kept-0: promoted follower keeps its local log [0, 200)'))).toBe(true);
  expect(said.some((line) => line.includes('kept-0: applied 0 bytes past the kept end 200, up to 200'))).toBe(true);
  const values = follower.context.engine.fetch('kept', 0, 0, { maxBytes: 1 << 20 }).batches.flatMap((batch) => [...batch.records()].map((r) => new TextDecoder().decode(r.value!)));
  expect(values).toEqual(Array.from({ length: RECORDS }, (_, i) => `r-${i}`));
  const [appended] = await follower.context.engine.produce('kept', [{ value: 'after' }], { partition: 0, acks: 'all' });
  expect(appended!.offset).toBe(RECORDS);
});
