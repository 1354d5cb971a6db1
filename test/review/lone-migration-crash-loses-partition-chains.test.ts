// Review finding (issue 24, HIGH: acknowledged records lost): migrateLoneDirectory creates a
// topic's record first and its partition records (leader, epoch, and the chain of the writer's
// earlier WAL streams) after. A start that fails between the two (a store error on a partition
// record's create, a kill -9) leaves the topic record standing and no marker file; the next start
// migrates again, finds the topic record and skips the topic whole ("a record stands: it is the
// truth"), so its partition records are never written. The first scan then claims each partition
// as never led (chain []): nothing is rebuilt, every record acknowledged before the upgrade is
// gone, and new produces are given offsets from 0 again.
import { expect, test } from 'bun:test';
import { Broker } from '../../src/broker/broker.ts';
import { Ferry } from '../../src/ferry/index.ts';
import { StoreError } from '../../src/store/errors.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { PutOptions, PutResult } from '../../src/store/object-store.ts';
import { tempDir } from '../support/temp-dir.ts';

const NODE_ID = 3;
const RECORDS = 12;

/** Fails the create of one partition record once, as a store outage or a crash at that instant would. */
class FailOnceStore extends MemoryStore {
  failKey: string | null = null;
  override async put(key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult> {
    if (this.failKey !== null && key.endsWith(this.failKey)) {
      this.failKey = null;
      throw new StoreError('Unavailable', `PutObject ${key}: injected outage`, { key });
    }
    return super.put(key, body, options);
  }
}

test('a migration interrupted after the topic record keeps every record of the old directory at its offset', async () => {
  const wal = new FailOnceStore();
  const directory = tempDir();
  const walOptions = { store: wal, writerId: `broker-${NODE_ID}`, config: { uploadIntervalMs: 1 } };
  const old = await Ferry.open({ directory, wal: walOptions });
  old.createTopic('orders', { partitions: 2 });
  for (let i = 0; i < RECORDS; i++) await old.produce('orders', [{ value: `record ${i}` }], { partition: i % 2, acks: 'all' });
  await old.close();

  const options = { listenHost: '127.0.0.1', listenPort: 0, nodeId: NODE_ID, engine: { directory, wal: walOptions } };
  wal.failKey = 'control/partitions/orders/0';
  await expect(Broker.start(options)).rejects.toThrow();

  const broker = await Broker.start(options);
  try {
    const { engine } = broker.context;
    for (const partition of [0, 1]) {
      expect(engine.leads('orders', partition)).toBe(true);
      expect(engine.fetch('orders', partition, 0).highWatermark).toBe(RECORDS / 2);
    }
    const [produced] = await engine.produce('orders', [{ value: 'after the move' }], { partition: 0, acks: 'all' });
    expect(produced!.offset).toBe(RECORDS / 2);
  } finally {
    await broker.stop();
  }
});
