import type { BrokerOptions } from './broker-options.ts';
import type { ClusterNode } from '../cluster/node.ts';
import { ControlStore } from '../control/control-store.ts';
import { DeletedIncarnations } from '../tier/deleted-incarnations.ts';
import { ClusterEnginePolicy } from '../cluster/engine-policy.ts';
import { clusterMember } from '../cluster/member.ts';
import { RegisteredAddresses } from '../cluster/replica-address.ts';
import { Engine, FerryError, type EngineOptions } from '../engine/index.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { ClusterTopology, SingleBrokerTopology } from './topology.ts';
import type { Clock } from '../util/clock.ts';
import { systemClock } from '../util/clock.ts';
import type { BrokerContext } from './context.ts';
import { GroupCoordinator } from './groups/coordinator.ts';
import { OFFSETS_RETENTION_MINUTES_DEFAULT, OffsetExpiry } from './groups/offset-expiry.ts';
import { ControlOffsetStore, OffsetStore } from './groups/offset-store.ts';
import { ControlProducerIdBlocks, FileProducerIdBlocks, ProducerIds } from './producers.ts';
import { Router } from './router.ts';
import { logSlowRequests } from './slow-requests.ts';
import { type Logger, loggerOf } from '../observability/logger.ts';
import { defaultLogger } from '../observability/record-logger.ts';
import { apiBindings } from './bindings.ts';
import { instrument } from './request-metrics.ts';
import { withMeasuredStores } from './store-metrics.ts';
import { enforceClientQuotas } from './quota-enforcement.ts';
import { BrokerSecurity } from './auth/broker-security.ts';
import type { ListenerConfig } from './auth/listener-config.ts';
import { ConnectionLimits } from './connection-limits.ts';
import { RequestMemory } from './request-memory.ts';
import { QUEUED_REQUEST_BYTES_MAX_DEFAULT } from './connection.ts';
import { MAX_CONNECTIONS_DEFAULT, PLAINTEXT_LISTENER } from './server.ts';
import type { ListenerEndpoint } from '../cluster/endpoints.ts';
import { FileStore } from '../store/file.ts';
import { join } from 'node:path';
import { isIP } from 'node:net';
import { systemNetwork } from '../util/system-network.ts';
import { KafkaServer } from './server.ts';
import { MetricsRegistry } from '../metrics/index.ts';
import { type MetricsEndpoint, serveMetrics } from './metrics-endpoint.ts';
import { checkStores } from './store-check.ts';
import { definedOnly } from '../util/defined-only.ts';
import { regressed } from '../util/regressions.ts';
import { type LoneMigration, migrateLoneDirectory } from './lone-migration.ts';
import { systemDisk } from '../util/disk.ts';
import type { Network } from '../util/network.ts';

const CLUSTER_ID_DEFAULT = 'ferry-cluster';
const DEFAULT_PARTITIONS = 1;
const MS_PER_MINUTE = 60_000;

export type { BrokerOptions, ClusterOptions } from './broker-options.ts';

/** A Kafka-protocol broker over one engine: real Kafka clients produce, fetch and form groups. */
export class Broker {
  /** What the request handlers share: the engine, groups, offsets, topology (for tests and tools). */
  readonly context: BrokerContext;
  /** Its metrics, as GET /metrics serves them. */
  readonly metrics: MetricsRegistry;
  readonly #servers: readonly KafkaServer[];
  readonly #security: BrokerSecurity;
  readonly #metricsServer: MetricsEndpoint | null;
  readonly #cluster: ClusterNode | null;
  readonly #offsetExpiry: OffsetExpiry;

  private constructor(
    context: BrokerContext,
    servers: readonly KafkaServer[],
    security: BrokerSecurity,
    metrics: MetricsRegistry,
    metricsServer: MetricsEndpoint | null,
    cluster: ClusterNode | null,
    offsetExpiry: OffsetExpiry,
  ) {
    this.context = context;
    this.#offsetExpiry = offsetExpiry;
    this.#servers = servers;
    this.#security = security;
    this.metrics = metrics;
    this.#metricsServer = metricsServer;
    this.#cluster = cluster;
  }

  /** Opens the engine, starts every listener (and the cluster membership), and resolves once clients can connect; what started is stopped again if a step fails. */
  static async start(given: BrokerOptions): Promise<Broker> {
    const clock = given.clock ?? systemClock;
    const metrics = given.engine.metrics ?? new MetricsRegistry();
    const options = asClusterOfOne(withMeasuredStores(given, metrics, clock));
    const log = loggerOf(options.log, defaultLogger(clock));
    if (options.cluster !== undefined && options.engine.wal === undefined) throw new FerryError('InvalidArgument', 'a cluster broker needs a WAL store: its partitions move through it');
    await checkStores(given, clock); // the stores as given: one store in two roles is probed once
    // Security first: a listener's unreadable certificate stops the start before any recovery.
    const perIpOverrides = await resolvedOverrides(options.security?.maxConnectionsPerIpOverrides, options.network ?? systemNetwork);
    const security = await BrokerSecurity.open(listenersOf(options), options.security ?? {}, { ...(await securityStoreOf(options)), clock, metrics, log, ...definedOnly({ random: options.random }) });
    // A cluster manages the engine from its open on: its policy answers once the broker joins (clusterMember).
    const clusterPolicy = options.cluster === undefined ? undefined : new ClusterEnginePolicy(options.nodeId);
    let engine: Engine;
    try {
      engine = await Engine.open({
        ...options.engine,
        ...tierOf(options),
        clock,
        metrics,
        ...definedOnly({ random: options.random }),
        logger: log,
        ...definedOnly({ cluster: clusterPolicy }),
        ...(options.minInsyncReplicas === undefined ? {} : { minInsyncReplicas: options.minInsyncReplicas }),
      });
    } catch (error) {
      security.stop();
      throw error;
    }
    let context: BrokerContext | undefined;
    const servers: KafkaServer[] = [];
    let cluster: ClusterNode | null = null;
    try {
      const router = new Router(
        logSlowRequests(
          log.child({ component: 'broker' }),
          clock,
          instrument(
            metrics,
            clock,
            enforceClientQuotas(
              apiBindings(() => context!),
              { quotas: security.quotas, clock, metrics },
            ),
          ),
        ),
      );
      const limits = new ConnectionLimits({
        maxConnections: options.maxConnections ?? MAX_CONNECTIONS_DEFAULT,
        ...definedOnly({ maxConnectionsPerIp: options.security?.maxConnectionsPerIp, perIpOverrides }),
      });
      listen(options, security, { router, limits, clock, metrics, log }, servers);
      const endpoints: ListenerEndpoint[] = security.listeners.map(({ config }, index) => ({
        listener: config.name,
        host: config.advertisedHost ?? config.host,
        port: config.advertisedPort ?? servers[index]!.port,
      }));
      const first = endpoints[0]!;
      const self = {
        nodeId: options.nodeId,
        host: first.host,
        port: first.port,
        rack: options.rack ?? null,
        ...(endpoints.length > 1 || first.listener !== PLAINTEXT_LISTENER.name ? { endpoints } : {}),
      };
      // A cluster reserves producer ids in its control records: its brokers' disks are not their state.
      const controlBlocks =
        options.cluster === undefined ? null : new ControlProducerIdBlocks(new ControlStore(options.cluster.store, options.cluster.prefix ?? '', definedOnly({ random: options.random })));
      const producers = new ProducerIds(controlBlocks ?? new FileProducerIdBlocks(options.engine.directory, options.nodeId, options.engine.disk));
      cluster =
        options.cluster === undefined
          ? null
          : clusterMember({
              controlStore: options.cluster.store,
              controlPrefix: options.cluster.prefix ?? '',
              walStore: options.engine.wal!.store,
              walPrefix: options.engine.wal!.prefix ?? '',
              self: { ...self, leaseMs: options.cluster.leaseMs },
              scanIntervalMs: options.cluster.scanIntervalMs,
              peerListen: options.cluster.peerPort === null ? null : { host: security.listeners[0]!.config.host, port: options.cluster.peerPort ?? 0 },
              engine,
              policy: clusterPolicy!,
              clock,
              metrics,
              ...definedOnly({ network: options.network, random: options.random, log, interBroker: security.interBrokerConnector ?? undefined }),
            });
      const controlOffsets =
        cluster === null
          ? null
          : new ControlOffsetStore(new ControlStore(options.cluster!.store, options.cluster!.prefix ?? '', { ...definedOnly({ random: options.random }), incarnation: cluster.incarnation }), {
              nodeId: options.nodeId,
              incarnation: cluster.incarnation,
            });
      context = {
        nodeId: options.nodeId,
        advertisedHost: self.host,
        advertisedPort: self.port,
        rack: self.rack,
        clusterId: options.clusterId ?? CLUSTER_ID_DEFAULT,
        engine,
        clock,
        groups: new GroupCoordinator(clock),
        offsets: controlOffsets ?? OffsetStore.open(options.engine.directory, options.engine.disk),
        producers,
        topology:
          cluster === null
            ? new SingleBrokerTopology(self, engine)
            : new ClusterTopology(
                cluster,
                options.defaultReplicationFactor ?? 1,
                new RegisteredAddresses(clock, options.network === undefined ? undefined : (host) => options.network!.resolve(host)),
                () => engine.brokerTopicDefaults(),
                engine,
                security.interBrokerListener,
              ),
        autoCreateTopics: options.autoCreateTopics ?? true,
        defaultPartitions: options.defaultPartitions ?? DEFAULT_PARTITIONS,
        defaultReplicationFactor: cluster === null ? 1 : (options.defaultReplicationFactor ?? 1),
        security,
        endpoints,
      };
      if (given.cluster === undefined && cluster !== null) await migrateLoneDirectory(loneMigrationOf(options, engine, { producerIds: controlBlocks!, offsets: controlOffsets! }, log));
      await cluster?.start();
      const startedContext = context;
      const offsetExpiry = new OffsetExpiry({
        groups: startedContext.groups,
        offsets: startedContext.offsets,
        clock,
        retentionMs: options.offsetsRetentionMs ?? OFFSETS_RETENTION_MINUTES_DEFAULT * MS_PER_MINUTE,
        coordinates: (group) => startedContext.topology.coordinatorFor(group)?.nodeId === options.nodeId,
        log,
      });
      offsetExpiry.start();
      const metricsServer = options.metricsListen === undefined ? null : serveMetrics(metrics, options.metricsListen.host, options.metricsListen.port, clock);
      return new Broker(startedContext, servers, security, metrics, metricsServer, cluster, offsetExpiry);
    } catch (error) {
      // What was started is stopped, so that this process (an embedding service) can start again:
      // the engine's directory lock, the listeners and the cluster timers go with it.
      cluster?.stop();
      cluster?.closePeerLinks();
      for (const server of servers) server.stop();
      security.stop();
      context?.groups.close();
      await engine.close().catch(() => {});
      throw error;
    }
  }

  /** The first listener's port. */
  get port(): number {
    return this.#servers[0]!.port;
  }

  /** The port of the listener of that name (upper case), or null if there is none. */
  portOf(listener: string): number | null {
    const index = this.#security.listeners.findIndex(({ config }) => config.name === listener);
    return index < 0 ? null : this.#servers[index]!.port;
  }

  /** The metrics endpoint's port, when serving one. */
  get metricsPort(): number | null {
    return this.#metricsServer?.port ?? null;
  }

  /** One line per listener for the start log: its name, address, protocol, mechanisms and certificate (no secrets). */
  listenerSummaries(): string[] {
    return this.#security.listeners.map(({ config, opened }, index) => `${config.name} on ${config.host}:${this.#servers[index]!.port}: ${opened.summary}`);
  }

  /**
   * SIGHUP: the listeners read their certificates, CRL, PLAIN users and JWKS again; connections
   * opened from now on use them, open ones keep theirs. Throws (keeping the old material of the
   * listeners that failed) when a file no longer reads.
   */
  reloadSecurity(): Promise<void> {
    return this.#security.reload();
  }

  /**
   * Whether this broker acknowledges writes now: always alone; in a cluster, while its lease is
   * held and, after a lapse, a scan confirmed what it still leads [C1]. A broker cut off from the
   * control store keeps the partitions others took from it meanwhile in its engine until that scan,
   * but acknowledges nothing and serves no read as their leader (L5): while this is false, what it
   * leads may be another broker's already.
   */
  get acknowledging(): boolean {
    return this.#cluster?.leaseHeld() ?? true;
  }

  /** Stops listening, ends every connection, flushes and closes the engine, then resigns its lease. */
  async stop(): Promise<void> {
    this.#cluster?.stop();
    for (const server of this.#servers) server.stop();
    this.#security.stop();
    void this.#metricsServer?.stop();
    this.#offsetExpiry.stop();
    this.context.groups.close();
    // Flush the WAL before giving up the lease: a successor seals this stream when it takes over.
    await this.context.engine.close();
    await this.#cluster?.resign().catch(() => {}); // if it fails, the lease simply runs out
  }
}

/**
 * Starts one KafkaServer per listener, sharing the connection limits and the request budget, into
 * `servers` as each starts (so that a listener that cannot start leaves the others to be stopped).
 */
function listen(
  options: BrokerOptions,
  security: BrokerSecurity,
  shared: { router: Router; limits: ConnectionLimits; clock: Clock; metrics: MetricsRegistry; log: Logger },
  servers: KafkaServer[],
): void {
  const memory = new RequestMemory(options.queuedMaxRequestBytes ?? QUEUED_REQUEST_BYTES_MAX_DEFAULT);
  const optional = definedOnly({ network: options.network, connectionsMaxIdleMs: options.connectionsMaxIdleMs, failedAuthenticationDelayMs: options.security?.failedAuthenticationDelayMs });
  for (const { config, opened } of security.listeners) {
    servers.push(KafkaServer.listen({ ...shared, ...optional, hostname: config.host, port: config.port, listener: opened.security, memory, authentication: security.events }));
  }
}

/** The listeners configured, or one PLAINTEXT listener at the listen address. */
function listenersOf(options: BrokerOptions): readonly ListenerConfig[] {
  if (options.listeners !== undefined) {
    if (options.listeners.length === 0) throw new FerryError('InvalidArgument', 'a broker needs at least one listener');
    return options.listeners;
  }
  return [
    {
      name: PLAINTEXT_LISTENER.name,
      protocol: 'PLAINTEXT',
      host: options.listenHost,
      port: options.listenPort,
      ...definedOnly({ advertisedHost: options.advertisedHost, advertisedPort: options.advertisedPort }),
    },
  ];
}

/**
 * Where the security records (ACLs, SCRAM credentials) live: the cluster's control store; for a
 * single broker its WAL store (so that a stateless broker started on an empty disk keeps them),
 * or without one a file store in its log directory.
 */
async function securityStoreOf(options: BrokerOptions): Promise<{ store: ObjectStore; prefix: string }> {
  if (options.cluster !== undefined) return { store: options.cluster.store, prefix: options.cluster.prefix ?? '' };
  const wal = options.engine.wal;
  if (wal !== undefined) return { store: wal.store, prefix: wal.prefix ?? '' };
  return { store: await FileStore.open(join(options.engine.directory, SECURITY_FILE_STORE_DIRECTORY)), prefix: '' };
}

/**
 * max.connections.per.ip.overrides names hosts or addresses; a host name counts for each of its
 * addresses, resolved once at start (Kafka resolves them when it reads the setting). A name that
 * does not resolve stops the start: its bound would never apply.
 */
async function resolvedOverrides(overrides: ReadonlyMap<string, number> | undefined, network: Network): Promise<ReadonlyMap<string, number> | undefined> {
  if (overrides === undefined) return undefined;
  const resolved = new Map<string, number>();
  for (const [host, bound] of overrides) {
    if (isIP(host) !== 0) {
      resolved.set(host, bound);
      continue;
    }
    const addresses = await network.resolve(host).catch(() => []);
    if (addresses.length === 0) throw new FerryError('InvalidArgument', `max.connections.per.ip.overrides: host ${host} does not resolve to any address`);
    for (const address of addresses) resolved.set(address, bound);
  }
  return resolved;
}

/**
 * A broker with a WAL store and no cluster store is a cluster of one over its WAL store's control
 * records (issue 24, docs/design.md contract 14): its topics, leader epochs, producer-id blocks and group
 * offsets outlive its disk, and a restart on an empty one rebuilds every partition from the store.
 */
function asClusterOfOne(options: BrokerOptions): BrokerOptions {
  const wal = options.engine.wal;
  if (options.cluster !== undefined || wal === undefined || regressed('lone-broker-disk-is-truth')) return options;
  const { leaseMs, scanIntervalMs } = options.lone ?? { leaseMs: LONE_LEASE_MS, scanIntervalMs: LONE_SCAN_INTERVAL_MS };
  return { ...options, cluster: { store: wal.store, prefix: wal.prefix ?? '', leaseMs, scanIntervalMs, peerPort: null } };
}

/** What a cluster of one moves from a data directory written before it was one (issue 24). */
function loneMigrationOf(options: BrokerOptions, engine: Engine, to: { producerIds: ControlProducerIdBlocks; offsets: ControlOffsetStore }, log: Logger): LoneMigration {
  const { stream } = engine.wal!.config;
  const walOptions = options.engine.wal!;
  const disk = options.engine.disk ?? systemDisk;
  return {
    directory: options.engine.directory,
    disk,
    control: new ControlStore(options.cluster!.store, options.cluster!.prefix ?? '', definedOnly({ random: options.random })),
    nodeId: options.nodeId,
    topics: engine.topics(),
    wal: { store: walOptions.store, prefix: walOptions.prefix ?? '', writerId: stream.writerId, currentEpoch: stream.epoch },
    producerIds: to.producerIds,
    groupOffsets: { from: OffsetStore.open(options.engine.directory, disk), to: to.offsets },
    log: log.child({ component: 'broker' }),
  };
}

/** A lone broker's lease: as the CLI's default for a cluster (it waits on no other broker's). */
const LONE_LEASE_MS = 10_000;
/** A lone broker's scan: as the CLI's default. */
const LONE_SCAN_INTERVAL_MS = 1000;

/** A single broker without a WAL store keeps its security records here, in its log directory. */
const SECURITY_FILE_STORE_DIRECTORY = 'security-records';

/** A cluster's tier learns which topic incarnations were deleted from the deletion records the cluster writes beside its topic records (DI1). */
function tierOf(options: BrokerOptions): Pick<EngineOptions, 'tier'> {
  const { tier } = options.engine;
  if (tier === undefined || options.cluster === undefined || tier.deletedTopicIds !== undefined) return {};
  const deletions = new DeletedIncarnations(new ControlStore(options.cluster.store, options.cluster.prefix ?? '', definedOnly({ random: options.random })));
  return { tier: { ...tier, deletedTopicIds: () => deletions.list() } };
}
