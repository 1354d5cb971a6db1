// docs/cluster-protocol.md [C1] storageFailing, for the WAL store: a leader cut from the WAL store
// but not from the control store keeps renewing its lease. Simulation seed 224952
// (test/sim/found-bugs.test.ts): it kept its partitions for the whole 8 s cut while every acks=all
// on them waited on uploads that failed, and no one took over. Now uploads that failed for a lease
// with none landing count as a failed disk: another broker takes the partitions over, and what the
// cut-off leader held unshipped is never acknowledged.
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Broker } from '../../src/broker/broker.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { ObjectStore } from '../../src/store/object-store.ts';
import { cuttableStore } from '../support/cuttable-store.ts';
import { until } from '../support/until.ts';
import { recordSaysStorageFailing, startWalCutBroker } from '../support/wal-cut-broker.ts';

setDefaultTimeout(60_000);

const LEASE_MS = 1000;
const ACKED_BEFORE_CUT = 10;

const root = mkdtempSync(join(tmpdir(), 'ferry-wal-cut-'));
const brokers: Broker[] = [];

afterAll(async () => {
  for (const broker of brokers) await broker.stop().catch(() => {});
  rmSync(root, { recursive: true, force: true });
});

async function startBroker(store: MemoryStore, walStore: ObjectStore, nodeId: number): Promise<Broker> {
  const broker = await startWalCutBroker(root, store, walStore, nodeId);
  brokers.push(broker);
  return broker;
}

test('a leader cut from the WAL store for longer than a lease hands its partitions over, and acknowledges nothing it could not ship', async () => {
  const store = new MemoryStore();
  const view = cuttableStore(store);
  const cutOff = await startBroker(store, view.store, 1);
  const other = await startBroker(store, store, 2);
  await cutOff.context.topology.createTopic('t', 2, 1);
  await until(() => [0, 1].some((p) => cutOff.context.engine.leads('t', p)), 'broker 1 to lead a partition');
  const partition = [0, 1].find((p) => cutOff.context.engine.leads('t', p))!;
  for (let i = 0; i < ACKED_BEFORE_CUT; i++) await cutOff.context.engine.produce('t', [{ value: `acked ${i}` }], { partition, acks: 'all' });

  view.cut = true;
  let answer = 'pending' as 'pending' | 'acknowledged' | 'refused';
  cutOff.context.engine.produce('t', [{ value: 'sent during the cut' }], { partition, acks: 'all' }).then(
    () => (answer = 'acknowledged'),
    () => (answer = 'refused'),
  );
  // Broker 1 keeps its lease (the control store answers it) but says its storage fails: broker 2 takes over.
  await until(() => other.context.engine.leads('t', partition), 'broker 2 to take the partition over', 10 * LEASE_MS);
  expect(await recordSaysStorageFailing(store, 1)).toBe(true); // renewed, saying so
  expect(cutOff.acknowledging).toBe(false); // flagged: it stopped acting as leader before others could take over
  await other.context.engine.produce('t', [{ value: 'after the takeover' }], { partition, acks: 'all' });

  view.cut = false; // broker 1's upload meets the seal: fenced, it refuses what it held
  await until(() => answer !== 'pending', 'the produce sent during the cut to be answered', 10 * LEASE_MS);
  expect(answer).toBe('refused');
  const values: string[] = [];
  const { batches } = await other.context.engine.fetchWithTier('t', partition, 0, { maxBytes: 1 << 20 });
  for (const batch of batches) for (const record of batch.records()) values.push(new TextDecoder().decode(record.value!));
  expect(values).toEqual([...Array.from({ length: ACKED_BEFORE_CUT }, (_, i) => `acked ${i}`), 'after the takeover']);
  // Once its uploads land again (a new writer epoch) it says so and may lead again.
  await until(() => cutOff.context.engine.walStoreFailingForMs() === 0, 'broker 1 to upload again', 10 * LEASE_MS);
});
