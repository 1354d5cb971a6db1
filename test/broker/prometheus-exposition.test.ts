// A broker on a file store, after produce, fetch and a refused request through kafkajs: its
// /metrics passes `promtool check metrics` (Prometheus's own linter: names, units, suffixes,
// histogram shape), carries the families the issue asks for, and docs/grafana-dashboard.json
// names no family the broker does not expose.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import { Broker } from '../../src/broker/broker.ts';
import { FileStore } from '../../src/store/file.ts';
import { describeClient, missingCommand } from '../clients/support/tools.ts';

setDefaultTimeout(60_000);

const TOPIC = 'scraped';
const MESSAGES = 20;
const directory = mkdtempSync(join(tmpdir(), 'ferry-metrics-'));
let broker: Broker;
let exposition = '';

async function scrape(): Promise<string> {
  const response = await fetch(`http://127.0.0.1:${broker.metricsPort}/metrics`);
  expect(response.headers.get('content-type')).toContain('version=0.0.4');
  return response.text();
}

async function traffic(kafka: Kafka): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 2 }] });
  await admin.createTopics({ topics: [{ topic: TOPIC, numPartitions: 2 }] }).catch(() => {}); // TOPIC_ALREADY_EXISTS
  await admin.disconnect();
  const producer = kafka.producer();
  await producer.connect();
  await producer.send({ topic: TOPIC, acks: -1, messages: Array.from({ length: MESSAGES }, (_, index) => ({ key: `k${index}`, value: `v${index}` })) });
  await producer.disconnect();
  const consumer = kafka.consumer({ groupId: 'scraper', maxWaitTimeInMs: 50 });
  await consumer.connect();
  await consumer.subscribe({ topic: TOPIC, fromBeginning: true });
  let received = 0;
  await new Promise<void>((done) => void consumer.run({ eachMessage: async () => void (++received === MESSAGES && done()) }));
  await consumer.disconnect();
}

beforeAll(async () => {
  const store = await FileStore.open(join(directory, 'objects'));
  broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    metricsListen: { host: '127.0.0.1', port: 0 },
    engine: { directory: join(directory, 'data'), log: { flush: { kind: 'none' } }, wal: { store, writerId: 'broker-1', config: { uploadIntervalMs: 2 } } },
  });
  await traffic(new Kafka({ clientId: 'metrics-test', brokers: [`127.0.0.1:${broker.port}`], logLevel: logLevel.NOTHING, retry: { retries: 3 } }));
  exposition = await scrape();
});

afterAll(async () => {
  await broker?.stop();
  rmSync(directory, { recursive: true, force: true });
});

/** The value of the sample line named exactly `series` (name and labels as printed), or undefined. */
function sample(series: string): number | undefined {
  const line = exposition.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? undefined : Number(line.slice(series.length + 1));
}

/** Every family the exposition declares (its `# TYPE` lines), with its type. */
function families(): Map<string, string> {
  const declared = new Map<string, string>();
  for (const match of exposition.matchAll(/^# TYPE (\S+) (\S+)$/gm)) declared.set(match[1]!, match[2]!);
  return declared;
}

describe('the families the issue asks for', () => {
  test('requests, error codes and latency per API', () => {
    expect(sample('ferry_broker_requests_total{api="Produce"}')).toBeGreaterThanOrEqual(1);
    expect(sample('ferry_broker_requests_total{api="Fetch"}')).toBeGreaterThanOrEqual(1);
    expect(sample('ferry_broker_request_errors_total{api="CreateTopics",error="TOPIC_ALREADY_EXISTS"}')).toBe(1);
    expect(sample('ferry_broker_request_latency_seconds_count{api="Produce"}')).toBe(sample('ferry_broker_requests_total{api="Produce"}'));
    expect(sample('ferry_broker_request_latency_seconds_bucket{api="Produce",le="+Inf"}')).toBe(sample('ferry_broker_request_latency_seconds_count{api="Produce"}'));
  });

  test('object store calls, bytes and latency by store role and operation', () => {
    const puts = sample('ferry_object_store_requests_total{operation="put",store="wal"}') ?? 0;
    expect(puts).toBeGreaterThanOrEqual(1);
    expect(sample('ferry_object_store_request_duration_seconds_count{operation="put",store="wal"}')).toBe(puts);
    expect(sample('ferry_object_store_uploaded_bytes_total{store="wal"}')).toBeGreaterThan(0);
  });

  test('WAL, partitions, connections, disk and process levels', () => {
    const types = families();
    for (const [name, type] of [
      ['ferry_wal_queued_objects', 'gauge'],
      ['ferry_wal_uploads_in_flight', 'gauge'],
      ['ferry_wal_produce_to_durable_seconds', 'histogram'],
      ['ferry_partitions', 'gauge'],
      ['ferry_partition_leaders', 'gauge'],
      ['ferry_under_replicated_partitions', 'gauge'],
      ['ferry_follower_lag_offsets', 'gauge'],
      ['ferry_broker_connections', 'gauge'],
      ['ferry_disk_free_bytes', 'gauge'],
      ['ferry_storage_write_failures_total', 'counter'],
      ['ferry_process_cpu_seconds_total', 'counter'],
      ['ferry_process_resident_memory_bytes', 'gauge'],
      ['ferry_process_event_loop_delay_seconds', 'histogram'],
    ])
      expect(types.get(name!)).toBe(type!);
    expect(sample('ferry_partitions')).toBeGreaterThanOrEqual(2);
    expect(sample('ferry_partition_leaders')).toBe(sample('ferry_partitions'));
    expect(sample('ferry_under_replicated_partitions')).toBe(0);
    expect(sample('ferry_wal_produce_to_durable_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(sample('ferry_disk_free_bytes')).toBeGreaterThan(0);
    expect(sample('ferry_process_resident_memory_bytes')).toBeGreaterThan(0);
    expect(sample('ferry_process_cpu_seconds_total')).toBeGreaterThan(0);
  });

  test('no summaries and no milliseconds are left', () => {
    expect([...families().values()]).not.toContain('summary');
    expect([...families().keys()].filter((name) => /_ms(_|$)/.test(name))).toEqual([]);
  });
});

describeClient('promtool', missingCommand('promtool', 'prometheus'))('promtool check metrics', () => {
  test('the exposition is clean', () => {
    const checked = Bun.spawnSync(['promtool', 'check', 'metrics'], { stdin: new TextEncoder().encode(exposition) });
    const said = `${checked.stdout.toString()}${checked.stderr.toString()}`;
    expect(said).toBe('');
    expect(checked.exitCode).toBe(0);
  });
});

/** Family names the sources register (`'ferry_...'` literals under src/): some appear only in a cluster or on a fault. */
function registeredInSources(root: string): Set<string> {
  const names = new Set<string>();
  const walk = (path: string): void => {
    for (const entry of readdirSync(path)) {
      const child = join(path, entry);
      if (statSync(child).isDirectory()) walk(child);
      else if (child.endsWith('.ts')) for (const match of readFileSync(child, 'utf8').matchAll(/'(ferry_[a-z0-9_]+)'/g)) names.add(match[1]!);
    }
  };
  walk(root);
  return names;
}

test('every metric the Grafana dashboard queries is a family the broker exposes', () => {
  const dashboard = JSON.parse(readFileSync(join(import.meta.dir, '../../docs/grafana-dashboard.json'), 'utf8')) as { panels: { targets: { expr: string }[] }[] };
  const exprs = dashboard.panels.flatMap((panel) => panel.targets.map((target) => target.expr));
  expect(exprs.length).toBeGreaterThan(10);
  const exposed = new Set([...families().keys()]);
  const registered = registeredInSources(join(import.meta.dir, '../../src'));
  const unknown: string[] = [];
  for (const expr of exprs) {
    for (const [name] of expr.matchAll(/\bferry_[a-z0-9_]+/g)) {
      const family = name.replace(/_(bucket|sum|count)$/, '');
      if (!exposed.has(family) && !registered.has(family)) unknown.push(name);
    }
  }
  expect(unknown).toEqual([]);
});
