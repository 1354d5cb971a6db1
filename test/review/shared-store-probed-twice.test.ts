// Review finding (issue 14, low): Broker.start now wraps the WAL and control stores in an
// InstrumentedStore each (src/broker/store-metrics.ts) before checkStores runs, so the check's
// `cluster.store !== wal?.store` (src/broker/store-check.ts: one probe for a store serving both
// roles) is always true: a broker whose WAL and control records share one store probes its
// conditional writes twice at every start (two probe objects, ~12 requests instead of ~6).
import { afterEach, expect, test } from 'bun:test';
import { Broker } from '../../src/broker/broker.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import type { PutOptions, PutResult } from '../../src/store/object-store.ts';
import { tempDir } from '../support/temp-dir.ts';

class CountingStore extends MemoryStore {
  probesCreated = 0;
  override async put(key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult> {
    const result = await super.put(key, body, options);
    if (key.includes('conditional-write-check/') && options?.ifNoneMatch === '*') this.probesCreated++;
    return result;
  }
}

const running: Broker[] = [];
afterEach(async () => {
  for (const broker of running.splice(0)) await broker.stop().catch(() => {});
});

test('a store serving as both WAL and control store is probed for conditional writes once', async () => {
  const store = new CountingStore();
  running.push(
    await Broker.start({
      listenHost: '127.0.0.1',
      listenPort: 0,
      nodeId: 1,
      cluster: { store, leaseMs: 120_000, scanIntervalMs: 60_000, peerPort: null },
      engine: { directory: tempDir(), log: { flush: { kind: 'none' } }, wal: { store, writerId: 'broker-1' } },
    }),
  );
  expect(store.probesCreated).toBe(1);
}, 60_000);
