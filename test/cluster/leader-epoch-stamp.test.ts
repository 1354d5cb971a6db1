// Records a cluster leader writes carry its leader epoch (KIP-101/320, docs/cluster-protocol.md
// [E1]/[E3]; adversarial review of finding 10). The engine stamped every batch with epoch 0 (the
// embedded engine's) whatever epoch the broker had adopted the partition in, so the leader-epoch
// cache never learnt a leader change: after a takeover, OffsetForLeaderEpoch for the old epoch
// answered the new leader's log end (the old epoch seemed to go on forever), and consumers could
// not detect a truncation. The first claim is epoch 0, so a single leader change hides the bug
// until the new leader writes.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker } from '../../src/broker/broker.ts';
import { handleOffsetForLeaderEpoch } from '../../src/broker/handlers/offset-for-leader-epoch.ts';
import { ErrorCode } from '../../src/protocol/error-codes.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { batchOf } from '../support/batches.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(60_000);

const root = mkdtempSync(join(tmpdir(), 'ferry-cluster-epoch-stamp-'));
const brokers: Broker[] = [];
const RECORDS_BEFORE = 5;
const RECORDS_AFTER = 3;

afterAll(async () => {
  for (const broker of brokers) await broker.stop().catch(() => {});
  rmSync(root, { recursive: true, force: true });
});

test('after a takeover the new leader stamps its epoch on what it writes, and the old epoch ends where it ended', async () => {
  const store = new MemoryStore({ seed: 29 });
  for (const nodeId of [1, 2]) {
    brokers.push(
      await Broker.start({
        listenHost: '127.0.0.1',
        listenPort: 0,
        nodeId,
        cluster: { store, leaseMs: 2000, scanIntervalMs: 100 },
        engine: { directory: join(root, `broker-${nodeId}`), log: { flush: { kind: 'none' } }, wal: { store, writerId: `broker-${nodeId}`, config: { uploadIntervalMs: 2 } } },
      }),
    );
  }
  await brokers[0]!.context.topology.createTopic('s', 1, 1);
  await until(() => brokers.some((b) => b.context.engine.leads('s', 0)), 'a leader of s-0');
  const first = brokers.find((b) => b.context.engine.leads('s', 0))!;
  const second = brokers.find((b) => b !== first)!;
  const oldEpoch = first.context.engine.leaderEpoch('s', 0);
  for (let i = 0; i < RECORDS_BEFORE; i++) await (await first.context.engine.appendBatches('s', 0, batchOf(`old${i}`))).committed;

  await first.stop();
  brokers.splice(brokers.indexOf(first), 1);
  await until(() => second.context.engine.leads('s', 0), 'the takeover of s-0');
  const newEpoch = second.context.engine.leaderEpoch('s', 0);
  expect(newEpoch).toBeGreaterThan(oldEpoch);
  for (let i = 0; i < RECORDS_AFTER; i++) await (await second.context.engine.appendBatches('s', 0, batchOf(`new${i}`))).committed;

  const { batches } = second.context.engine.fetch('s', 0, 0, { maxBytes: 1 << 20 });
  expect(batches.map((batch) => batch.partitionLeaderEpoch)).toEqual([...Array(RECORDS_BEFORE).fill(oldEpoch), ...Array(RECORDS_AFTER).fill(newEpoch)]);

  const ask = (leaderEpoch: number) =>
    handleOffsetForLeaderEpoch(second.context, { replicaId: -1, topics: [{ topic: 's', partitions: [{ partition: 0, currentLeaderEpoch: newEpoch, leaderEpoch }] }] }).topics[0]!.partitions[0];
  expect(ask(oldEpoch)).toEqual({ errorCode: ErrorCode.NONE, partition: 0, leaderEpoch: oldEpoch, endOffset: RECORDS_BEFORE });
  expect(ask(newEpoch)).toEqual({ errorCode: ErrorCode.NONE, partition: 0, leaderEpoch: newEpoch, endOffset: RECORDS_BEFORE + RECORDS_AFTER });
});
