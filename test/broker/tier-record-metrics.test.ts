// Issue 28 item 4: the tier records' requests are counted in /metrics like every other store's,
// under their own role (store="tier-records"), and not under the WAL store's, whose store they
// share on a single broker. Before, the records' ControlStore was built on the unmeasured store.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { Broker } from '../../src/broker/broker.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import { FileStore } from '../../src/store/file.ts';
import type { ObjectStore, PutOptions, PutResult } from '../../src/store/object-store.ts';

setDefaultTimeout(60_000);

const TOPIC = 'tiered';
const MESSAGES = 50;
const TIER_INTERVAL_MS = 20;
const POLL_MS = 50;
/** A tier record is due within a few tier rounds; this is long past them. */
const TIER_RECORD_WAIT_MS = 20_000;
const directory = mkdtempSync(join(tmpdir(), 'ferry-tier-metrics-'));
let broker: Broker;

/** The WAL store, counting the puts of tier records and deletion records made through it (src/tier: `tier/`, `deleted-topics/` under the ControlStore's `control/`). */
class ControlPutCount {
  count = 0;
  wrap(store: ObjectStore): ObjectStore {
    return new Proxy(store, {
      get: (target, property, receiver) => {
        if (property !== 'put') {
          const value: unknown = Reflect.get(target, property, receiver);
          return typeof value === 'function' ? value.bind(target) : value; // the store's private fields need it as `this`
        }
        return (key: string, body: Uint8Array, options?: PutOptions): Promise<PutResult> => {
          if (key.startsWith('control/tier/') || key.startsWith('control/deleted-topics/')) this.count++;
          return target.put(key, body, options);
        };
      },
    });
  }
}
const controlPuts = new ControlPutCount();

beforeAll(async () => {
  const store = controlPuts.wrap(await FileStore.open(join(directory, 'objects')));
  const tierStore = await FileStore.open(join(directory, 'tier'));
  broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    metricsListen: { host: '127.0.0.1', port: 0 },
    engine: {
      directory: join(directory, 'data'),
      log: { flush: { kind: 'none' } },
      wal: { store, writerId: 'broker-1', config: { uploadIntervalMs: 2 } },
      // Whatever is committed is tiered at the next round: a tier record is written within ms.
      tier: { store: tierStore, control: new ControlStore(store, ''), intervalMs: TIER_INTERVAL_MS, tailMaxMs: 1 },
    },
  });
  const producer = new Kafka({ clientId: 'tier-metrics-test', brokers: [`127.0.0.1:${broker.port}`], logLevel: logLevel.NOTHING }).producer();
  await producer.connect();
  await producer.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: MESSAGES }, (_, index) => ({ value: `v${index}` })) });
  await producer.disconnect();
});

afterAll(async () => {
  await broker?.stop();
  rmSync(directory, { recursive: true, force: true });
});

async function sample(series: string): Promise<number | undefined> {
  const exposition = await (await fetch(`http://127.0.0.1:${broker.metricsPort}/metrics`)).text();
  const line = exposition.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

test('tier-record writes are counted under store="tier-records", each one, and the tier store under store="tier"', async () => {
  const series = 'ferry_object_store_requests_total{operation="put",store="tier-records"}';
  const deadline = performance.now() + TIER_RECORD_WAIT_MS;
  while (((await sample(series)) ?? 0) === 0) {
    expect(performance.now()).toBeLessThan(deadline); // no tier-record request counted
    await Bun.sleep(POLL_MS);
  }
  await broker.stop(); // no write after this: the count and the metric are compared at rest
  // Stopped, the endpoint is gone; the registry is read the way the endpoint renders it.
  const exposition = broker.metrics.renderPrometheus();
  const line = exposition.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  expect(Number(line?.slice(series.length + 1))).toBe(controlPuts.count);
  expect(exposition).toMatch(/^ferry_object_store_requests_total\{operation="\w+",store="tier"\} [1-9]/m);
});
