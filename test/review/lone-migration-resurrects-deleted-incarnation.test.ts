// Review finding (issue 24, DI1, HIGH when it happens: acknowledged records lost; needs a data
// directory from before the migration to start again, e.g. restored from a backup or a snapshot of
// the volume): migrateLoneDirectory creates `topics/<name>` with the id the old directory's registry
// holds whenever no topic record stands, without asking whether that id has a deletion record.
// A topic deleted after the first migration has one (`deleted-topics/<id>`, never removed), so the
// migration brings back an incarnation that every sweeper already counts as deleted: the broker
// leads it and acknowledges writes into it while its WAL GC takes every frame of it, tiered or not
// (GI1's deletion-record arm), so the acknowledged records are gone from the store.
import { expect, test } from 'bun:test';
import { cpSync } from 'node:fs';
import { Broker } from '../../src/broker/broker.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import { Ferry } from '../../src/ferry/index.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { DeletedIncarnations } from '../../src/tier/deleted-incarnations.ts';
import { tempDir } from '../support/temp-dir.ts';

const NODE_ID = 3;

test('a data directory from before the migration, started again after its topic was deleted, never brings the deleted incarnation back', async () => {
  const wal = new MemoryStore();
  const directory = tempDir();
  const walOptions = { store: wal, writerId: `broker-${NODE_ID}`, config: { uploadIntervalMs: 1 } };
  const old = await Ferry.open({ directory, wal: walOptions });
  const { id } = old.createTopic('orders', { partitions: 1 });
  await old.produce('orders', [{ value: 'before the upgrade' }], { acks: 'all' });
  await old.close();
  const backup = tempDir();
  cpSync(directory, backup, { recursive: true });

  const options = (dir: string) => ({ listenHost: '127.0.0.1', listenPort: 0, nodeId: NODE_ID, engine: { directory: dir, wal: walOptions } });
  const first = await Broker.start(options(directory));
  await first.context.topology.deleteTopic('orders');
  await first.stop();
  const control = new ControlStore(wal, '');
  expect(await new DeletedIncarnations(control).isDeleted(id)).toBe(true);

  // The volume is restored from the backup taken before the upgrade, and the broker starts on it.
  const second = await Broker.start(options(backup));
  try {
    const standing = (await control.read<{ topicId: string }>('topics/orders'))?.value ?? null;
    expect(standing?.topicId ?? null).not.toBe(id); // a deleted id never names a live topic again
    expect(second.context.topology.topicId('orders')).not.toBe(id);
  } finally {
    await second.stop();
  }
});
