import { stdoutLogger } from './log-output.ts';
import { startFields } from './start-fields.ts';
import type { Logger } from '../observability/logger.ts';
import { resolve } from 'node:path';
import { Broker } from '../broker/broker.ts';
import { CONNECTIONS_MAX_IDLE_MS_DEFAULT, QUEUED_REQUEST_BYTES_MAX_DEFAULT, REQUEST_BYTES_MAX } from '../broker/connection.ts';
import { OFFSETS_RETENTION_MINUTES_DEFAULT } from '../broker/groups/offset-expiry.ts';
import { MAX_CONNECTIONS_DEFAULT } from '../broker/server.ts';
import { ControlStore } from '../control/control-store.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { openStore } from '../store/url.ts';
import { DEFAULT_WAL_WRITER_CONFIG } from '../wal/writer.ts';
import { CliError, parseCommandArgs } from './args.ts';
import { EXIT_FAILURE, explainFailure } from './failure.ts';
import { nextStopRequest, startedByNpm } from './stop-request.ts';
import { type BrokerConfig, configKeysHelp, resolveBrokerConfig } from './broker-config.ts';
import { DEFAULT_STORE_DIRECTORY } from './broker-settings.ts';

const USAGE = `usage: ferry broker [options]

Runs a Kafka-protocol broker over the Ferry engine: kcat, kafkajs and librdkafka clients work
unchanged. Appends ship to object storage as WAL objects (KIP-1176); acks=all waits for them.

options (each also from the environment as FERRY_<NAME>, e.g. FERRY_LISTEN, or a config file):
  --listen HOST:PORT          where to listen (default 127.0.0.1:9092)
  --advertised HOST:PORT      what clients are told to connect to (default: the listen address)
  --node-id N                 this broker's id (default 1)
  --rack NAME                 this broker's rack / availability zone (client.rack matching)
  --data DIR                  local log directory (default ./data)
  --wal-store URL             object store for WAL data: file:///abs/path, file:rel/path, s3://bucket/prefix?...,
                              memory:// (default file:<data>/objects). A file: directory must exist (a typo
                              would start an empty store), except the default: see --create-store
  --tier-store URL            long-term store for rolled segments (KIP-405's remote tier; same URL forms): S3
                              Standard in production. Default: the WAL store, under its own keys, except
                              that an S3 Express WAL bucket (a name ending --x-s3) needs its own: tiering into
                              a one-zone bucket would cost five times as much and keep history in one zone
  --no-tier                   keep rolled segments on local disk only (no tier; the WAL is then not collected)
  --writer-id NAME            this broker's WAL writer id (default broker-<node id>)
  --upload-bytes N            close a WAL object at this size (default ${DEFAULT_WAL_WRITER_CONFIG.uploadBytes})
  --upload-interval-ms N      ...or this long after its first append (default ${DEFAULT_WAL_WRITER_CONFIG.uploadIntervalMs})
  --no-upload-when-idle       ...and never at once: by default an idle writer uploads on the next turn, so acks=all
                              is one PUT away; off, fewer PUTs at moderate rates (docs/cost-model.md)
  --partitions N              partitions of auto-created topics (default 1)
  --replication-factor N      replicas of auto-created topics in a cluster (default 1: the object store is the durability)
  --min-insync-replicas N     acks=all also waits for this many replicas, the leader included (default 1)
  --cluster-store URL         share partitions with other brokers through control records in this store
                              (same URL forms as --wal-store; all brokers of a cluster use the same one)
  --lease-ms N                a silent broker's partitions are taken over after this; alone (no --cluster-store), a
                              broker cut off from its store this long stops acknowledging (default 10000)
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
  --create-store              create a file: store's directory (--wal-store, --tier-store, --cluster-store) that
                              does not exist yet, for a new store or cluster (default: refuse to start)
  --metrics HOST:PORT         serve Prometheus metrics at GET /metrics (default 127.0.0.1:9644; 'off' for none)
  --no-auto-create            do not create topics on first use
  --log-level LEVEL           the lowest level of log line written: trace, debug, info, warn, error, fatal or
                              silent (default info). Lines are JSON (one object a line: level, time, component,
                              msg, topic and partition where one is concerned) unless stdout is a terminal
  --config FILE               a Kafka server.properties (Java properties) or JSON file (.json or starting
                              with '{'; JSON also takes the options' camelCase names, e.g. nodeId); also
                              FERRY_CONFIG. Precedence: defaults < config file < FERRY_* < flags. An unknown
                              key or a bad value stops the start; Kafka keys Ferry has no use for are listed
                              in one warning line
  -h, --help                  this text

config file keys (Kafka's names, then Ferry's own):
${configKeysHelp()
  .map((line) => `  ${line}`)
  .join('\n')}

security keys (config file only; each also as listener.name.<listener>.<key>, docs/security.md):
  listeners, listener.security.protocol.map  PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL listeners, all served
  ssl.keystore.location (PEM key + chain), ssl.keystore.key/.certificate.chain, ssl.key.password,
  ssl.truststore.location, ssl.client.auth (none|requested|required), ssl.enabled.protocols,
  ssl.cipher.suites, ssl.principal.mapping.rules, ferry.ssl.crl.location (PEM CRLs)
  sasl.enabled.mechanisms                     PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER
  listener.name.<l>.<mechanism>.sasl.jaas.config, ferry.sasl.jaas.file (KafkaServer section): PLAIN's
                                              user_NAME="password" entries, the broker's own username/password
  sasl.oauthbearer.jwks.endpoint.url (a JWKS file), .expected.audience, .expected.issuer, .sub.claim.name
  connections.max.reauth.ms (KIP-368), sasl.server.max.receive.size, connection.failed.authentication.delay.ms
  authorizer.class.name (StandardAuthorizer: ACLs), super.users, allow.everyone.if.no.acl.found
  inter.broker.listener.name or security.inter.broker.protocol, sasl.mechanism.inter.broker.protocol
  max.connections.per.ip, max.connections.per.ip.overrides
SCRAM users: ferry users add|remove|list (--help).

SIGTERM or SIGINT: stop accepting, flush the WAL, close the logs, exit (so does the exit of the process
that started it, when that is npm: npm start, npx). SIGHUP: read the listeners'
certificates, CRLs, PLAIN users (JAAS file) and JWKS files again, for new connections.`;

export async function runBroker(args: string[]): Promise<void> {
  const parsed = parseCommandArgs(
    args,
    {
      listen: { type: 'string' },
      advertised: { type: 'string' },
      'node-id': { type: 'string' },
      rack: { type: 'string' },
      data: { type: 'string' },
      'wal-store': { type: 'string' },
      'tier-store': { type: 'string' },
      'no-tier': { type: 'boolean' },
      'no-upload-when-idle': { type: 'boolean' },
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
      'create-store': { type: 'boolean' },
      'no-auto-create': { type: 'boolean' },
      config: { type: 'string' },
      'log-level': { type: 'string' },
    },
    USAGE,
  );
  if (parsed === null) return;
  const { config, warnings } = resolveBrokerConfig({ flags: parsed.values, env: process.env });
  for (const warning of warnings) console.error(warning);
  const logger = stdoutLogger(config.logLevel).child({ node: config.nodeId });
  const log = logger.child({ component: 'broker' });
  const data = resolve(config.data);
  const stopRequest = nextStopRequest(startedByNpm(process.env));
  const storeLogging = { logger };
  const store = await openStore(config.walStore ?? `file:${resolve(data, DEFAULT_STORE_DIRECTORY)}`, storeLogging);
  const clusterStore = config.cluster === null ? null : await openStore(config.cluster.store, storeLogging);
  const tierStore = await tierStoreOf(config, store, logger);
  const broker = await startOrExplain({
    ...(config.cluster === null || clusterStore === null
      ? {}
      : { cluster: { store: clusterStore, leaseMs: config.cluster.leaseMs, scanIntervalMs: config.cluster.scanIntervalMs, peerPort: config.cluster.peerPort } }),
    ...(config.lone === null ? {} : { lone: config.lone }),
    unsafeStore: config.unsafeStore,
    maxConnections: config.maxConnections,
    connectionsMaxIdleMs: config.connectionsMaxIdleMs,
    queuedMaxRequestBytes: config.queuedMaxRequestBytes,
    offsetsRetentionMs: config.offsetsRetentionMs,

    // Each line carries its time to the millisecond: a takeover is read from the gaps between them.
    log: logger,
    listenHost: config.listen.host,
    listenPort: config.listen.port,
    nodeId: config.nodeId,
    ...(config.listeners === null ? {} : { listeners: config.listeners }),
    security: config.security,
    ...(config.advertised === null ? {} : { advertisedHost: config.advertised.host, advertisedPort: config.advertised.port }),
    rack: config.rack,
    ...(config.metrics === null ? {} : { metricsListen: config.metrics }),
    autoCreateTopics: config.autoCreate,
    defaultPartitions: config.partitions,
    defaultReplicationFactor: config.replicationFactor,
    minInsyncReplicas: config.minInsyncReplicas,
    engine: {
      directory: data,
      log: config.log,
      ...(config.retentionCheckIntervalMs === null ? {} : { retentionCheckIntervalMs: config.retentionCheckIntervalMs }),
      ...(config.replicaLagTimeMaxMs === null ? {} : { replicaLagTimeMaxMs: config.replicaLagTimeMaxMs }),
      ...(tierStore === null ? {} : { tier: { store: tierStore, control: new ControlStore(clusterStore ?? store, '') } }),
      wal: { store, writerId: config.writerId, config: { uploadBytes: config.uploadBytes, uploadIntervalMs: config.uploadIntervalMs, uploadWhenIdle: config.uploadWhenIdle } },
    },
  });
  const metricsNote = broker.metricsPort === null ? 'no metrics endpoint' : `metrics on http://${config.metrics!.host}:${broker.metricsPort}/metrics`;
  const clusterNote = clusterStore === null ? 'single broker' : `cluster through ${clusterStore.kind} control records`;
  log.info(
    startFields(config, data, broker.port, store.kind),
    `ferry broker ${config.nodeId} listening on ${config.listen.host}:${broker.port} (advertised ${broker.context.advertisedHost}:${broker.context.advertisedPort}), data ${data}, WAL ${store.kind}, ${clusterNote}, ${metricsNote}`,
  );
  if (config.listeners !== null) for (const line of broker.listenerSummaries()) log.info({}, `listener ${line}`);
  const stopReloads = reloadOnHangUp(broker, log);
  const reason = await stopRequest;
  stopReloads();
  log.info({ stop: reason }, `${reason}: flushing and stopping`);
  const stores = [
    ['WAL store', () => store.close()],
    ['tier store', async () => (tierStore === store ? undefined : await tierStore?.close())],
    ['cluster store', async () => await clusterStore?.close()],
  ] as const;
  for (const [what, step] of [['broker', () => broker.stop()], ...stores] as const) {
    await step().catch((error: unknown) => {
      log.error({ err: error, step: what }, `ferry: stopping the ${what} failed: ${error instanceof Error ? error.message : String(error)}`);
      process.exitCode = 1;
    });
  }
}

/** The tier store (null with --no-tier): --tier-store, else the WAL store (brokerConfigOf ruled out an S3 Express one). */
async function tierStoreOf(config: BrokerConfig, walStore: ObjectStore, logger: Logger): Promise<ObjectStore | null> {
  if (!config.tier) return null;
  return config.tierStore === null ? walStore : openStore(config.tierStore, { logger });
}

/**
 * SIGHUP: the listeners read their certificates, CRL, PLAIN users (a JAAS file) and JWKS again,
 * for the connections opened from then on; a file that no longer reads is said in one line and
 * the old material kept. Returns what removes the handler.
 */
function reloadOnHangUp(broker: Broker, log: Logger): () => void {
  const reload = () => {
    broker.reloadSecurity().then(
      () => log.info({ signal: 'SIGHUP' }, "SIGHUP: reloaded the listeners' certificates, CRLs, PLAIN users and JWKS"),
      (error: unknown) => log.error({ signal: 'SIGHUP', err: error }, `ferry: SIGHUP: ${error instanceof Error ? error.message : String(error)}`),
    );
  };
  process.on('SIGHUP', reload);
  return () => void process.off('SIGHUP', reload);
}

/**
 * Broker.start, with a refusal to start (a port in use, a bad store, a locked directory) said in
 * one line (failure.ts) that names the broker and, for a port in use, the flag that moves it.
 */
async function startOrExplain(options: Parameters<typeof Broker.start>[0]): Promise<Broker> {
  try {
    return await Broker.start(options);
  } catch (error) {
    const failure = explainFailure(error, { dataFlag: '--data' });
    if (failure === null) throw error;
    const flag = (error as { code?: unknown }).code === 'EADDRINUSE' ? portFlagOf(error as Error, options) : null;
    // The command line was well formed: what refused it (a store, a port, a certificate file) is a runtime failure.
    throw new CliError(`broker ${options.nodeId} cannot start: ${failure.line}${flag === null ? '' : ` (${flag})`}`, EXIT_FAILURE);
  }
}

/** Which setting chose the port a listen failed on (Bun.serve names it only in its message). */
function portFlagOf(error: Error, options: Parameters<typeof Broker.start>[0]): string | null {
  const port = (error as { port?: unknown }).port ?? Number(/port (\d+)/.exec(error.message)?.[1]);
  if (port === options.metricsListen?.port) return '--metrics HOST:PORT, or --metrics off';
  if (options.cluster !== undefined && port === options.cluster.peerPort) return '--peer-port';
  if (port === options.listenPort) return '--listen HOST:PORT';
  return options.listeners === undefined ? null : "the config file's listeners";
}
