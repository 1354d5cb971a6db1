// Idle control-store requests of a 3-broker cluster at default lease and scan settings (issue 11
// item 5: detecting a dead leader must cost no more than today's defaults), with the peer links
// [K1] on and off: 3 in-process brokers, control records in their own memory store, one topic of
// 6 partitions, nothing produced; counts the control store's requests over a window once settled.
//   npx bun bench/idle-control-requests.ts [--seconds 60]
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Broker } from '../src/broker/broker.ts';
import { MemoryStore } from '../src/store/memory.ts';
import { BILLING_CLASS, S3_EXPRESS_ONE_ZONE_PRICES } from '../src/store/pricing.ts';
import type { RequestClass } from '../src/store/stats.ts';

const { values: args } = parseArgs({ options: { seconds: { type: 'string', default: '60' } } });
const WINDOW_S = Number(args.seconds);
const LEASE_MS = 10_000;
const SCAN_INTERVAL_MS = 1_000;
const SETTLE_MS = 3 * LEASE_MS;
const SECONDS_PER_MONTH = 30 * 24 * 3600;

async function measure(peerPort: number | null): Promise<void> {
  const root = mkdtempSync(join(tmpdir(), 'ferry-idle-'));
  const control = new MemoryStore();
  const wal = new MemoryStore();
  const brokers: Broker[] = [];
  try {
    for (let nodeId = 1; nodeId <= 3; nodeId++) {
      brokers.push(await Broker.start({
        listenHost: '127.0.0.1', listenPort: 0, nodeId,
        cluster: { store: control, leaseMs: LEASE_MS, scanIntervalMs: SCAN_INTERVAL_MS, peerPort },
        engine: { directory: join(root, `broker-${nodeId}`), log: { flush: { kind: 'none' } }, wal: { store: wal, writerId: `broker-${nodeId}` } },
      }));
    }
    await brokers[0]!.context.topology.createTopic('idle', 6);
    await Bun.sleep(SETTLE_MS);
    const before = control.stats().requests;
    await Bun.sleep(WINDOW_S * 1000);
    const after = control.stats().requests;
    const delta = Object.fromEntries(Object.entries(after).map(([kind, n]) => [kind, n - before[kind as keyof typeof before]])) as Record<string, number>;
    const perSecond = Object.values(delta).reduce((a, b) => a + b, 0) / WINDOW_S;
    const billed = (cls: 'put' | 'get') => Object.entries(delta).filter(([kind]) => BILLING_CLASS[kind as RequestClass] === cls).reduce((sum, [, n]) => sum + n, 0);
    const { putClassUsdPer1000, getClassUsdPer1000 } = S3_EXPRESS_ONE_ZONE_PRICES;
    const monthly = ((billed('put') * putClassUsdPer1000 + billed('get') * getClassUsdPer1000) / 1000) * (SECONDS_PER_MONTH / WINDOW_S);
    console.log(`peer links ${peerPort === null ? 'off' : 'on '}: ${perSecond.toFixed(2)} control requests/s over ${WINDOW_S} s (${JSON.stringify(delta)}), about $${monthly.toFixed(2)}/month at S3 Express request prices`);
  } finally {
    for (const broker of brokers) await broker.stop().catch(() => {});
    rmSync(root, { recursive: true, force: true });
  }
}

await measure(null);
await measure(0);
