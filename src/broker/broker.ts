import type { BrokerOptions } from './broker-options.ts';
import type { ClusterNode } from '../cluster/node.ts';
import { Engine, FerryError } from '../engine/index.ts';
import type { Clock } from '../util/clock.ts';
import { systemClock } from '../util/clock.ts';
import type { BrokerContext } from './context.ts';
import { GroupCoordinator } from './groups/coordinator.ts';
import { OFFSETS_RETENTION_MINUTES_DEFAULT, OffsetExpiry } from './groups/offset-expiry.ts';
import { ProducerIds } from './producers.ts';
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
import { ReadBufferPool } from './read-buffer-pool.ts';
import { RequestMemory } from './request-memory.ts';
import { QUEUED_REQUEST_BYTES_MAX_DEFAULT } from './connection.ts';
import { MAX_CONNECTIONS_DEFAULT, PLAINTEXT_LISTENER } from './server.ts';
import type { ListenerEndpoint } from '../cluster/endpoints.ts';
import { isIP } from 'node:net';
import { systemNetwork } from '../util/system-network.ts';
import { KafkaServer } from './server.ts';
import { MetricsRegistry } from '../metrics/index.ts';
import { type MetricsEndpoint, serveMetrics } from './metrics-endpoint.ts';
import { checkStores } from './store-check.ts';
import { type JoinDeps, placementOf } from './placement.ts';
import { definedOnly } from '../util/defined-only.ts';
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
    const options = withMeasuredStores(given, metrics, clock);
    const placement = placementOf(given, options); // single or clustered: decided here, once
    const log = loggerOf(options.log, defaultLogger(clock));
    await checkStores(given, clock); // the stores as given: one store in two roles is probed once
    // Security first: a listener's unreadable certificate stops the start before any recovery.
    const perIpOverrides = await resolvedOverrides(options.security?.maxConnectionsPerIpOverrides, options.network ?? systemNetwork);
    const security = await BrokerSecurity.open(listenersOf(options), options.security ?? {}, { ...(await placement.securityStore()), clock, metrics, log, ...definedOnly({ random: options.random }) });
    let engine: Engine;
    try {
      engine = await Engine.open({
        ...options.engine,
        ...placement.engineOptions,
        clock,
        metrics,
        ...definedOnly({ random: options.random }),
        logger: log,
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
      const joining: JoinDeps = { engine, self, security, clock, metrics, log };
      const producers = new ProducerIds(placement.producerIdBlocks());
      cluster = placement.join(joining);
      const offsets = placement.groupOffsets();
      context = {
        nodeId: options.nodeId,
        advertisedHost: self.host,
        advertisedPort: self.port,
        rack: self.rack,
        clusterId: options.clusterId ?? CLUSTER_ID_DEFAULT,
        engine,
        clock,
        groups: new GroupCoordinator(clock),
        offsets,
        producers,
        topology: placement.topology(joining),
        autoCreateTopics: options.autoCreateTopics ?? true,
        defaultPartitions: options.defaultPartitions ?? DEFAULT_PARTITIONS,
        defaultReplicationFactor: placement.defaultReplicationFactor,
        security,
        endpoints,
      };
      await placement.beforeServing(joining);
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
 * Starts one KafkaServer per listener, sharing the connection limits, the request budget and the Fetch read buffers, into
 * `servers` as each starts (so that a listener that cannot start leaves the others to be stopped).
 */
function listen(
  options: BrokerOptions,
  security: BrokerSecurity,
  shared: { router: Router; limits: ConnectionLimits; clock: Clock; metrics: MetricsRegistry; log: Logger },
  servers: KafkaServer[],
): void {
  const memory = new RequestMemory(options.queuedMaxRequestBytes ?? QUEUED_REQUEST_BYTES_MAX_DEFAULT);
  const readBuffers = new ReadBufferPool();
  const optional = definedOnly({ network: options.network, connectionsMaxIdleMs: options.connectionsMaxIdleMs, failedAuthenticationDelayMs: options.security?.failedAuthenticationDelayMs });
  for (const { config, opened } of security.listeners) {
    servers.push(KafkaServer.listen({ ...shared, ...optional, hostname: config.host, port: config.port, listener: opened.security, memory, readBuffers, authentication: security.events }));
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
