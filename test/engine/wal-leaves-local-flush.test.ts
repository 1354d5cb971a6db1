// Issue 27: an embedded engine with a WAL acknowledges acks=all once the WAL object is durable, so
// it syncs none of its local log on the way (as `ferry broker` does, flush 'none'): a local sync
// would buy no durability the acknowledgement relies on. Without a WAL the local log is the
// durability and the group commit still syncs it; a flush policy given is kept either way.
import { expect, test } from 'bun:test';
import { Engine } from '../../src/engine/index.ts';
import type { EngineOptions } from '../../src/engine/engine-options.ts';
import type { LogConfig } from '../../src/log/config.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { diskWithSync, systemDisk } from '../../src/util/disk.ts';
import { type FileSync, systemFileSync } from '../../src/util/file-sync.ts';
import { tempDir } from '../support/temp-dir.ts';

const PRODUCES = 5;
const UPLOAD_INTERVAL_MS = 1;

/** Produces PRODUCES times with acks 'all' and counts the data syncs of the local log's files meanwhile. */
async function dataSyncsWhileProducing(options: { wal: boolean; log?: Partial<LogConfig> }): Promise<number> {
  let dataSyncs = 0;
  const counting: FileSync = {
    ...systemFileSync,
    dataSyncSync: (fd) => {
      dataSyncs++;
      systemFileSync.dataSyncSync(fd);
    },
    dataSync: (fd) => {
      dataSyncs++;
      return systemFileSync.dataSync(fd);
    },
  };
  const engineOptions: EngineOptions = {
    directory: tempDir(),
    disk: diskWithSync(systemDisk, counting),
    ...(options.log === undefined ? {} : { log: options.log }),
    ...(options.wal ? { wal: { store: new MemoryStore(), writerId: 'w', config: { uploadIntervalMs: UPLOAD_INTERVAL_MS } } } : {}),
  };
  const engine = await Engine.open(engineOptions);
  try {
    engine.createTopic('t');
    const before = dataSyncs;
    for (let index = 0; index < PRODUCES; index++) await engine.produce('t', [{ value: `v${index}` }], { acks: 'all', partition: 0 });
    return dataSyncs - before;
  } finally {
    await engine.close();
  }
}

test('with a WAL, acks=all syncs nothing of the local log', async () => {
  expect(await dataSyncsWhileProducing({ wal: true })).toBe(0);
});

test('without a WAL, the group commit syncs the local log for acks=all', async () => {
  expect(await dataSyncsWhileProducing({ wal: false })).toBeGreaterThanOrEqual(1);
});

test('a flush policy given is kept with a WAL', async () => {
  expect(await dataSyncsWhileProducing({ wal: true, log: { flush: { kind: 'per-append' } } })).toBe(PRODUCES);
});
