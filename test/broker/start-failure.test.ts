// A Broker.start that fails after the engine opened (here the cluster's first lease write is
// refused) used to leave the engine open: its directory stayed locked, so in an embedding
// service, or a simulated process that the simulation restarts in place, every later start failed
// with "in use by another Ferry log" until the process ended. Found by the simulation (seed 129:
// one broker never came back and its partition stayed without a leader).
import { expect, test } from 'bun:test';
import { Broker } from '../../src/broker/broker.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { tempDir } from '../support/temp-dir.ts';

test('a start that fails after opening the engine releases it: the next start on the same directory succeeds', async () => {
  const store = new MemoryStore();
  const directory = tempDir();
  const start = () =>
    Broker.start({
      listenHost: '127.0.0.1',
      listenPort: 0,
      nodeId: 1,
      cluster: { store, leaseMs: 2000, scanIntervalMs: 100 },
      engine: { directory, log: { flush: { kind: 'none' } }, wal: { store, writerId: 'broker-1', config: { uploadIntervalMs: 2 } } },
    });
  store.injectFault({ operation: 'put', kind: 'AccessDenied', keyPrefix: 'control/brokers/' });
  await expect(start()).rejects.toThrow();
  const broker = await start();
  expect(broker.port).toBeGreaterThan(0);
  await broker.stop();
});
