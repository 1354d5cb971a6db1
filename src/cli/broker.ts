import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Broker } from '../broker/broker.ts';
import { CONNECTIONS_MAX_IDLE_MS_DEFAULT, QUEUED_REQUEST_BYTES_MAX_DEFAULT, REQUEST_BYTES_MAX } from '../broker/connection.ts';
import { OFFSETS_RETENTION_MINUTES_DEFAULT } from '../broker/groups/offset-expiry.ts';
import { MAX_CONNECTIONS_DEFAULT } from '../broker/server.ts';
import { FerryError } from '../errors.ts';
import { StoreError } from '../store/errors.ts';
import { ControlStore } from '../cluster/control-store.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { openStore } from '../store/url.ts';
import { DEFAULT_WAL_WRITER_CONFIG } from '../wal/writer.ts';
import { CliError, parseCommandArgs, positiveInteger } from './args.ts';

const USAGE = `usage: ferry broker [options]

Runs a Kafka-protocol broker over the Ferry engine: kcat, kafkajs and librdkafka clients work
unchanged. Appends ship to object storage as WAL objects (KIP-1176); acks=all waits for them.

options (each also from the environment as FERRY_<NAME>, e.g. FERRY_LISTEN, or a JSON config file):
  --listen HOST:PORT          where to listen (default 127.0.0.1:9092)
  --advertised HOST:PORT      what clients are told to connect to (default: the listen address)
  --node-id N                 this broker's id (default 1)
  --rack NAME                 this broker's rack / availability zone (client.rack matching)
  --data DIR                  local log directory (default ./data)
  --wal-store URL             object store for WAL data: file:///abs/path, file:rel/path, s3://bucket/prefix?...,
                              memory:// (default file:<data>/objects)
  --tier-store URL            long-term store for rolled segments (KIP-405's remote tier; same URL forms): S3
                              Standard in production. Default: the WAL store, under its own keys, except
                              that an S3 Express WAL bucket (a name ending --x-s3) needs its own: tiering into
                              a one-zone bucket would cost five times as much and keep history in one zone
  --no-tier                   keep rolled segments on local disk only (no tier; the WAL is then not collected)
  --writer-id NAME            this broker's WAL writer id (default broker-<node id>)
  --upload-bytes N            close a WAL object at this size (default ${DEFAULT_WAL_WRITER_CONFIG.uploadBytes})
  --upload-interval-ms N      ...or this long after its first append (default ${DEFAULT_WAL_WRITER_CONFIG.uploadIntervalMs})
  --partitions N              partitions of auto-created topics (default 1)
  --replication-factor N      replicas of auto-created topics in a cluster (default 1: the object store is the durability)
  --min-insync-replicas N     acks=all also waits for this many replicas, the leader included (default 1)
  --cluster-store URL         share partitions with other brokers through control records in this store
                              (same URL forms as --wal-store; all brokers of a cluster use the same one)
  --lease-ms N                a silent broker's partitions are taken over after this (default 10000)
  --scan-interval-ms N        how often leadership is re-examined (default 1000)
  --peer-port N               port (on the listen host) the other brokers connect to, to learn at once when this
                              process exits, kill -9 included, rather than after its lease (default 0: any free
                              port, published in the broker record; 'off' for none: leases alone)
  --max-connections N         connections open at once; more are closed on arrival (default ${MAX_CONNECTIONS_DEFAULT})
  --connections-max-idle-ms N close a connection that makes no progress this long: nothing read or written, no
                              request being handled (default ${CONNECTIONS_MAX_IDLE_MS_DEFAULT})
  --queued-max-request-bytes N
                              bytes of requests held at once across connections; past it, connections are
                              not read until requests finish (default ${QUEUED_REQUEST_BYTES_MAX_DEFAULT}, at least ${REQUEST_BYTES_MAX})
  --offsets-retention-minutes N
                              a consumer group with no members loses its committed offsets this long after it
                              emptied or they were committed, whichever is later (default ${OFFSETS_RETENTION_MINUTES_DEFAULT}: 7 days)
  --unsafe-store              start even if a store ignores conditional writes (If-None-Match, If-Match), as many
                              S3-compatible test servers do: fencing and compare-and-swap then do not hold, so
                              only for experiments with a single broker (default: refuse to start)
  --metrics HOST:PORT         serve Prometheus metrics at GET /metrics (default 127.0.0.1:9644; 'off' for none)
  --no-auto-create            do not create topics on first use
  --config FILE               a JSON file with any of the options above (camelCase keys)
  -h, --help                  this text

SIGTERM or SIGINT: stop accepting, flush the WAL, close the logs, exit.`;

interface BrokerSettings {
  listen: string;
  advertised?: string;
  nodeId: string;
  rack?: string;
  data: string;
  walStore?: string;
  tierStore?: string;
  tier: boolean;
  writerId?: string;
  uploadBytes?: string;
  uploadIntervalMs?: string;
  partitions?: string;
  replicationFactor?: string;
  minInsyncReplicas?: string;
  metrics: string;
  clusterStore?: string;
  leaseMs?: string;
  scanIntervalMs?: string;
  peerPort?: string;
  maxConnections?: string;
  connectionsMaxIdleMs?: string;
  queuedMaxRequestBytes?: string;
  offsetsRetentionMinutes?: string;
  autoCreate: boolean;
  unsafeStore: boolean;
}

const DEFAULTS: BrokerSettings = { listen: '127.0.0.1:9092', nodeId: '1', data: './data', metrics: '127.0.0.1:9644', autoCreate: true, unsafeStore: false, tier: true };
const ENV_KEYS: (keyof BrokerSettings)[] = ['listen', 'advertised', 'nodeId', 'rack', 'data', 'walStore', 'tierStore', 'writerId', 'uploadBytes', 'uploadIntervalMs', 'partitions', 'replicationFactor', 'minInsyncReplicas', 'metrics', 'clusterStore', 'leaseMs', 'scanIntervalMs', 'peerPort', 'maxConnections', 'connectionsMaxIdleMs', 'queuedMaxRequestBytes', 'offsetsRetentionMinutes'];

export async function runBroker(args: string[]): Promise<void> {
  const parsed = parseCommandArgs(args, {
    listen: { type: 'string' },
    advertised: { type: 'string' },
    'node-id': { type: 'string' },
    rack: { type: 'string' },
    data: { type: 'string' },
    'wal-store': { type: 'string' },
    'tier-store': { type: 'string' },
    'no-tier': { type: 'boolean' },
    'writer-id': { type: 'string' },
    'upload-bytes': { type: 'string' },
    'upload-interval-ms': { type: 'string' },
    partitions: { type: 'string' },
    'replication-factor': { type: 'string' },
    'min-insync-replicas': { type: 'string' },
    metrics: { type: 'string' },
    'cluster-store': { type: 'string' },
    'lease-ms': { type: 'string' },
    'scan-interval-ms': { type: 'string' },
    'peer-port': { type: 'string' },
    'max-connections': { type: 'string' },
    'connections-max-idle-ms': { type: 'string' },
    'queued-max-request-bytes': { type: 'string' },
    'offsets-retention-minutes': { type: 'string' },
    'unsafe-store': { type: 'boolean' },
    'no-auto-create': { type: 'boolean' },
    config: { type: 'string' },
  }, USAGE);
  if (parsed === null) return;
  const settings = resolveSettings(parsed.values);
  const [listenHost, listenPort] = hostPort('listen', settings.listen);
  const advertised: [string, number] | null = settings.advertised === undefined ? null : hostPort('advertised', settings.advertised);
  const nodeId = positiveInteger('node-id', settings.nodeId, 1);
  const data = resolve(settings.data);
  const metricsListen = settings.metrics === 'off' ? undefined : hostPort('metrics', settings.metrics);
  const stopSignal = nextStopSignal();
  checkTierStore(settings);
  const store = await openStore(settings.walStore ?? `file:${resolve(data, 'objects')}`);
  const clusterStore = settings.clusterStore === undefined ? null : await openStore(settings.clusterStore);
  const tierStore = await tierStoreOf(settings, store);
  const cluster = clusterStore === null ? {} : { cluster: { store: clusterStore, leaseMs: positiveInteger('lease-ms', settings.leaseMs, 10_000), scanIntervalMs: positiveInteger('scan-interval-ms', settings.scanIntervalMs, 1000), peerPort: peerPortOf(settings.peerPort) } };
  const queuedMaxRequestBytes = positiveInteger('queued-max-request-bytes', settings.queuedMaxRequestBytes, QUEUED_REQUEST_BYTES_MAX_DEFAULT);
  if (queuedMaxRequestBytes < REQUEST_BYTES_MAX) throw new CliError(`--queued-max-request-bytes must be at least the largest request, ${REQUEST_BYTES_MAX}, got ${queuedMaxRequestBytes}`);
  const broker = await startOrExplain({
    ...cluster,
    unsafeStore: settings.unsafeStore,
    maxConnections: positiveInteger('max-connections', settings.maxConnections, MAX_CONNECTIONS_DEFAULT),
    connectionsMaxIdleMs: positiveInteger('connections-max-idle-ms', settings.connectionsMaxIdleMs, CONNECTIONS_MAX_IDLE_MS_DEFAULT),
    queuedMaxRequestBytes,
    offsetsRetentionMs: positiveInteger('offsets-retention-minutes', settings.offsetsRetentionMinutes, OFFSETS_RETENTION_MINUTES_DEFAULT) * MS_PER_MINUTE,

    // Each event line carries its UTC time to the millisecond: a takeover is read from the gaps between them.
    log: (message) => console.log(`${new Date().toISOString()} ${message}`),
    listenHost, listenPort, nodeId,
    ...(advertised === null ? {} : { advertisedHost: advertised[0], advertisedPort: advertised[1] }),
    rack: settings.rack ?? null,
    ...(metricsListen === undefined ? {} : { metricsListen: { host: metricsListen[0], port: metricsListen[1] } }),
    autoCreateTopics: settings.autoCreate,
    defaultPartitions: positiveInteger('partitions', settings.partitions, 1),
    defaultReplicationFactor: positiveInteger('replication-factor', settings.replicationFactor, 1),
    minInsyncReplicas: positiveInteger('min-insync-replicas', settings.minInsyncReplicas, 1),
    engine: {
      directory: data,
      log: { flush: { kind: 'none' } }, // durability comes from the WAL objects (KIP-1176)
      ...(tierStore === null ? {} : { tier: { store: tierStore, control: new ControlStore(clusterStore ?? store, '') } }),
      wal: { store, writerId: settings.writerId ?? `broker-${nodeId}`, config: { uploadBytes: positiveInteger('upload-bytes', settings.uploadBytes, DEFAULT_WAL_WRITER_CONFIG.uploadBytes), uploadIntervalMs: positiveInteger('upload-interval-ms', settings.uploadIntervalMs, DEFAULT_WAL_WRITER_CONFIG.uploadIntervalMs) } },
    },
  });
  const metricsNote = broker.metricsPort === null ? 'no metrics endpoint' : `metrics on http://${metricsListen![0]}:${broker.metricsPort}/metrics`;
  const clusterNote = clusterStore === null ? 'single broker' : `cluster through ${clusterStore.kind} control records`;
  console.log(`ferry broker ${nodeId} listening on ${listenHost}:${broker.port} (advertised ${broker.context.advertisedHost}:${broker.context.advertisedPort}), data ${data}, WAL ${store.kind}, ${clusterNote}, ${metricsNote}`);
  const signal = await stopSignal;
  console.log(`${signal}: flushing and stopping`);
  const stores = [['WAL store', () => store.close()], ['tier store', async () => (tierStore === store ? undefined : await tierStore?.close())], ['cluster store', async () => await clusterStore?.close()]] as const;
  for (const [what, step] of [['broker', () => broker.stop()], ...stores] as const) {
    await step().catch((error: unknown) => {
      console.error(`ferry: stopping the ${what} failed: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    });
  }
}

/** S3 Express One Zone directory buckets are named `<base>--<zone id>--x-s3`. */
const S3_EXPRESS_BUCKET = /^s3:\/\/[^/?]+--x-s3(?:[/?]|$)/;

/** An S3 Express WAL bucket needs a tier store of its own: said before any store is opened. */
function checkTierStore(settings: BrokerSettings): void {
  if (settings.tier && settings.tierStore === undefined && settings.walStore !== undefined && S3_EXPRESS_BUCKET.test(settings.walStore)) {
    throw new CliError(`--wal-store ${settings.walStore} is an S3 Express One Zone bucket: give rolled segments a --tier-store (S3 Standard), or --no-tier`);
  }
}

/** The tier store (null with --no-tier): --tier-store, else the WAL store (checkTierStore ruled out an S3 Express one). */
async function tierStoreOf(settings: BrokerSettings, walStore: ObjectStore): Promise<ObjectStore | null> {
  if (!settings.tier) return null;
  return settings.tierStore === undefined ? walStore : openStore(settings.tierStore);
}

/** Resolves with the first SIGTERM or SIGINT; installed before the broker starts, so none is missed. */
function nextStopSignal(): Promise<string> {
  return new Promise((resolve) => {
    const stop = (signal: string) => () => {
      process.off('SIGTERM', onTerm);
      process.off('SIGINT', onInt);
      resolve(signal);
    };
    const onTerm = stop('SIGTERM');
    const onInt = stop('SIGINT');
    process.on('SIGTERM', onTerm);
    process.on('SIGINT', onInt);
  });
}

const MS_PER_MINUTE = 60_000;

/** Broker.start, with a refusal to start (a bad store, a locked directory) said in one line, exit code 1. */
async function startOrExplain(options: Parameters<typeof Broker.start>[0]): Promise<Broker> {
  try {
    return await Broker.start(options);
  } catch (error) {
    if (error instanceof FerryError || error instanceof StoreError) throw new CliError(`broker ${options.nodeId} cannot start: ${error.message}`, 1);
    throw error;
  }
}

/** Defaults, then the config file, then FERRY_* environment variables, then flags. */
function resolveSettings(values: { readonly [name: string]: string | boolean | undefined }): BrokerSettings {
  const settings: BrokerSettings = { ...DEFAULTS };
  const file = typeof values.config === 'string' ? values.config : process.env.FERRY_CONFIG;
  if (file !== undefined) {
    if (!existsSync(file)) throw new CliError(`config file ${file} does not exist`);
    try {
      Object.assign(settings, JSON.parse(readFileSync(file, 'utf8')));
    } catch (error) {
      throw new CliError(`config file ${file} is not JSON: ${(error as Error).message}`);
    }
  }
  for (const key of ENV_KEYS) {
    const value = process.env[`FERRY_${key.replace(/[A-Z]/g, (c) => `_${c}`).toUpperCase()}`];
    if (value !== undefined) (settings as unknown as Record<string, string>)[key] = value;
  }
  for (const key of ENV_KEYS) {
    const flag = values[key.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)];
    if (typeof flag === 'string') (settings as unknown as Record<string, string>)[key] = flag;
  }
  if (values['no-auto-create'] === true) settings.autoCreate = false;
  if (values['no-tier'] === true) settings.tier = false;
  if (process.env.FERRY_UNSAFE_STORE !== undefined) settings.unsafeStore = /^(1|true|yes)$/i.test(process.env.FERRY_UNSAFE_STORE);
  if (values['unsafe-store'] === true) settings.unsafeStore = true;
  return settings;
}

function hostPort(name: string, text: string): [string, number] {
  const match = /^(.+):(\d{1,5})$/.exec(text);
  const port = Number(match?.[2]);
  if (match === null || port > 65535) throw new CliError(`--${name} must be HOST:PORT, got '${text}'`);
  return [match[1]!, port];
}

/** --peer-port: 'off' (no peer links), 0 (any free port) or a port. */
function peerPortOf(text: string | number | undefined): number | null {
  if (text === undefined) return 0;
  if (text === 'off') return null;
  const port = Number(text);
  if (!Number.isSafeInteger(port) || port < 0 || port > 65535) throw new CliError(`--peer-port must be a port (0 for any free one) or 'off', got '${text}'`);
  return port;
}
