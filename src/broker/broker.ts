import type { ClusterNode } from '../cluster/node.ts';
import { ControlStore } from '../cluster/control-store.ts';
import { clusterLiveTopicIds } from '../cluster/live-topic-ids.ts';
import { clusterMember } from '../cluster/member.ts';
import { RegisteredAddresses } from '../cluster/replica-address.ts';
import { Ferry, FerryError, type FerryOptions } from '../engine/index.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { ClusterTopology, SingleBrokerTopology } from './topology.ts';
import type { Clock } from '../util/clock.ts';
import { systemClock } from '../util/clock.ts';
import { apiVersionsCodec } from './apis/api-versions.ts';
import { alterConfigsCodec } from './apis/alter-configs.ts';
import { createAclsCodec } from './apis/create-acls.ts';
import { createPartitionsCodec } from './apis/create-partitions.ts';
import { deleteAclsCodec } from './apis/delete-acls.ts';
import { describeAclsCodec } from './apis/describe-acls.ts';
import { deleteGroupsCodec } from './apis/delete-groups.ts';
import { deleteRecordsCodec } from './apis/delete-records.ts';
import { describeLogDirsCodec } from './apis/describe-log-dirs.ts';
import { describeProducersCodec } from './apis/describe-producers.ts';
import { incrementalAlterConfigsCodec } from './apis/incremental-alter-configs.ts';
import { describeClusterCodec } from './apis/describe-cluster.ts';
import { describeGroupsCodec } from './apis/describe-groups.ts';
import { listGroupsCodec } from './apis/list-groups.ts';
import { offsetDeleteCodec } from './apis/offset-delete.ts';
import { createTopicsCodec } from './apis/create-topics.ts';
import { deleteTopicsCodec } from './apis/delete-topics.ts';
import { describeConfigsCodec } from './apis/describe-configs.ts';
import { fetchCodec } from './apis/fetch.ts';
import { findCoordinatorCodec } from './apis/find-coordinator.ts';
import { heartbeatCodec } from './apis/heartbeat.ts';
import { initProducerIdCodec } from './apis/init-producer-id.ts';
import { joinGroupCodec } from './apis/join-group.ts';
import { leaveGroupCodec } from './apis/leave-group.ts';
import { listOffsetsCodec } from './apis/list-offsets.ts';
import { metadataCodec } from './apis/metadata.ts';
import { offsetCommitCodec } from './apis/offset-commit.ts';
import { offsetFetchCodec } from './apis/offset-fetch.ts';
import { offsetForLeaderEpochCodec } from './apis/offset-for-leader-epoch.ts';
import { produceCodec } from './apis/produce.ts';
import { syncGroupCodec } from './apis/sync-group.ts';
import type { BrokerContext } from './context.ts';
import { GroupCoordinator } from './groups/coordinator.ts';
import { OFFSETS_RETENTION_MINUTES_DEFAULT, OffsetExpiry } from './groups/offset-expiry.ts';
import { ControlOffsetStore, OffsetStore } from './groups/offset-store.ts';
import { handleDescribeCluster } from './handlers/cluster.ts';
import { handleFindCoordinator, handleInitProducerId } from './handlers/coordinator.ts';
import { handleCreateAcls, handleDeleteAcls, handleDescribeAcls } from './handlers/acls.ts';
import { handleDeleteGroups, handleDescribeGroups, handleListGroups, handleOffsetDelete } from './handlers/group-admin.ts';
import { handleFetch, refuseOldFetch } from './handlers/fetch.ts';
import { handleHeartbeat, handleJoinGroup, handleLeaveGroup, handleOffsetCommit, handleOffsetFetch, handleSyncGroup } from './handlers/groups.ts';
import { handleListOffsets } from './handlers/list-offsets.ts';
import { handleMetadata } from './handlers/metadata.ts';
import { handleOffsetForLeaderEpoch } from './handlers/offset-for-leader-epoch.ts';
import { handleProduce, refuseOldProduce } from './handlers/produce.ts';
import { handleAlterConfigs, handleDescribeConfigs, handleIncrementalAlterConfigs } from './handlers/configs.ts';
import { handleCreatePartitions, handleDeleteRecords, handleDescribeLogDirs, handleDescribeProducers } from './handlers/partition-admin.ts';
import { handleCreateTopics, handleDeleteTopics } from './handlers/topics.ts';
import { ControlProducerIdBlocks, FileProducerIdBlocks, ProducerIds } from './producers.ts';
import { type ApiBinding, Router } from './router.ts';
import { KafkaServer } from './server.ts';
import type { Server } from 'bun';
import { MetricsRegistry } from '../metrics/index.ts';
import { serveMetrics } from './metrics-endpoint.ts';
import { checkStores } from './store-check.ts';
import { definedOnly } from '../util/defined-only.ts';
import type { Network } from '../util/network.ts';
import type { Random } from '../util/random.ts';

export interface BrokerOptions {
  readonly listenHost: string;
  /** 0 picks a free port (tests). */
  readonly listenPort: number;
  /** What clients are told to connect to; the listen address by default. */
  readonly advertisedHost?: string;
  readonly advertisedPort?: number;
  readonly nodeId: number;
  readonly rack?: string | null;
  readonly clusterId?: string;
  readonly autoCreateTopics?: boolean;
  readonly defaultPartitions?: number;
  /** Replication factor of auto-created topics and of CreateTopics asking for the default (cluster mode). */
  readonly defaultReplicationFactor?: number;
  /** acks=all waits for this many replicas, the leader included (capped at the topic's replication factor). */
  readonly minInsyncReplicas?: number;
  /** The engine this broker serves (directory, WAL store, log settings). */
  readonly engine: FerryOptions;
  readonly clock?: Clock;
  /** The sockets it listens on and reports to leaders through; the operating system's by default (the simulation's in src/sim/network.ts). */
  readonly network?: Network;
  /** Draws topic ids, the cluster incarnation and retry jitter; the operating system's randomness by default. Overrides engine.random. */
  readonly random?: Random;
  readonly log?: (message: string) => void;
  /** Serve Prometheus metrics on this address (GET /metrics); none when absent. */
  readonly metricsListen?: { readonly host: string; readonly port: number };
  /** Share partitions with other brokers through control records (docs/cluster-protocol.md). */
  readonly cluster?: ClusterOptions;
  /** Start on stores that ignore conditional writes (single-broker experiments only); checked at start otherwise. */
  readonly unsafeStore?: boolean;
  /** Connections open at once; more are closed on arrival (Kafka's max.connections). */
  readonly maxConnections?: number;
  /** A connection that makes no progress this long (nothing read or written, no request being handled) is closed (Kafka's connections.max.idle.ms). */
  readonly connectionsMaxIdleMs?: number;
  /** Bytes of requests held at once across connections (Kafka's queued.max.request.bytes). */
  readonly queuedMaxRequestBytes?: number;
  /** Offsets of a group with no members expire this long after it emptied or they were committed (offsets.retention.minutes). */
  readonly offsetsRetentionMs?: number;
}

export interface ClusterOptions {
  /** Where the control records live (may be another bucket than the WAL data). */
  readonly store: ObjectStore;
  readonly prefix?: string;
  /** A broker silent this long is dead to the others and its partitions are taken over. */
  readonly leaseMs: number;
  readonly scanIntervalMs: number;
  /**
   * [K1] The port of this broker's peer listener, on its listen host: the other brokers hold a
   * connection to it and take over at once when this process exits (kill -9 included), rather than
   * after its lease. 0 (the default) picks a free port, published in the broker record; null: none.
   */
  readonly peerPort?: number | null;
}

const CLUSTER_ID_DEFAULT = 'ferry-cluster';
const DEFAULT_PARTITIONS = 1;
const MS_PER_MINUTE = 60_000;

/** A Kafka-protocol broker over one Ferry engine: real Kafka clients produce, fetch and form groups. */
export class Broker {
  readonly context: BrokerContext;
  readonly metrics: MetricsRegistry;
  readonly #server: KafkaServer;
  readonly #metricsServer: Server<undefined> | null;
  readonly #cluster: ClusterNode | null;
  readonly #offsetExpiry: OffsetExpiry;

  private constructor(context: BrokerContext, server: KafkaServer, metrics: MetricsRegistry, metricsServer: Server<undefined> | null, cluster: ClusterNode | null, offsetExpiry: OffsetExpiry) {
    this.context = context;
    this.#offsetExpiry = offsetExpiry;
    this.#server = server;
    this.metrics = metrics;
    this.#metricsServer = metricsServer;
    this.#cluster = cluster;
  }

  static async start(options: BrokerOptions): Promise<Broker> {
    const clock = options.clock ?? systemClock;
    const metrics = options.engine.metrics ?? new MetricsRegistry();
    if (options.cluster !== undefined && options.engine.wal === undefined) throw new FerryError('InvalidArgument', 'a cluster broker needs a WAL store: its partitions move through it');
    await checkStores(options, clock);
    const engine = await Ferry.open({ ...options.engine, ...tierOf(options), clock, metrics, ...definedOnly({ random: options.random }), ...(options.log === undefined ? {} : { report: options.log }), managedPartitions: options.cluster !== undefined, ...(options.minInsyncReplicas === undefined ? {} : { minInsyncReplicas: options.minInsyncReplicas }) });
    let context: BrokerContext | undefined;
    let server: KafkaServer | undefined;
    let cluster: ClusterNode | null = null;
    try {
      const router = new Router(instrument(metrics, clock, bindings(() => context!)));
      server = KafkaServer.listen({ hostname: options.listenHost, port: options.listenPort, router, clock, metrics, ...definedOnly({ network: options.network, log: options.log, maxConnections: options.maxConnections, connectionsMaxIdleMs: options.connectionsMaxIdleMs, queuedMaxRequestBytes: options.queuedMaxRequestBytes }) });
      const self = { nodeId: options.nodeId, host: options.advertisedHost ?? options.listenHost, port: options.advertisedPort ?? server.port, rack: options.rack ?? null };
      // A cluster reserves producer ids in its control records: its brokers' disks are not their state.
      const producers = new ProducerIds(options.cluster === undefined ? new FileProducerIdBlocks(options.engine.directory, options.nodeId, options.engine.disk) : new ControlProducerIdBlocks(new ControlStore(options.cluster.store, options.cluster.prefix ?? '')));
      cluster = options.cluster === undefined ? null : clusterMember({
        controlStore: options.cluster.store,
        controlPrefix: options.cluster.prefix ?? '',
        walStore: options.engine.wal!.store,
        walPrefix: options.engine.wal!.prefix ?? '',
        self: { ...self, leaseMs: options.cluster.leaseMs },
        scanIntervalMs: options.cluster.scanIntervalMs,
        peerListen: options.cluster.peerPort === null ? null : { host: options.listenHost, port: options.cluster.peerPort ?? 0 },
        engine,
        clock,
        metrics,
        ...definedOnly({ network: options.network, random: options.random, log: options.log }),
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
        offsets: cluster === null ? OffsetStore.open(options.engine.directory, options.engine.disk) : new ControlOffsetStore(new ControlStore(options.cluster!.store, options.cluster!.prefix ?? ''), { nodeId: options.nodeId, incarnation: cluster.incarnation }),
        producers,
        topology: cluster === null ? new SingleBrokerTopology(self, engine) : new ClusterTopology(cluster, options.defaultReplicationFactor ?? 1, new RegisteredAddresses(clock, options.network === undefined ? undefined : (host) => options.network!.resolve(host)), () => engine.brokerTopicDefaults(), engine),
        autoCreateTopics: options.autoCreateTopics ?? true,
        defaultPartitions: options.defaultPartitions ?? DEFAULT_PARTITIONS,
        defaultReplicationFactor: cluster === null ? 1 : (options.defaultReplicationFactor ?? 1),
      };
      await cluster?.start();
      const offsetExpiry = new OffsetExpiry({
        groups: context.groups,
        offsets: context.offsets,
        clock,
        retentionMs: options.offsetsRetentionMs ?? OFFSETS_RETENTION_MINUTES_DEFAULT * MS_PER_MINUTE,
        coordinates: (group) => context!.topology.coordinatorFor(group)?.nodeId === options.nodeId,
        ...definedOnly({ log: options.log }),
      });
      offsetExpiry.start();
      const metricsServer = options.metricsListen === undefined ? null : serveMetrics(metrics, options.metricsListen.host, options.metricsListen.port);
      return new Broker(context, server, metrics, metricsServer, cluster, offsetExpiry);
    } catch (error) {
      // What was started is stopped, so that this process (an embedding service) can start again:
      // the engine's directory lock, the listener and the cluster timers go with it.
      cluster?.stop();
      cluster?.closePeerLinks();
      server?.stop();
      context?.groups.close();
      await engine.close().catch(() => {});
      throw error;
    }
  }

  get port(): number {
    return this.#server.port;
  }

  /** The metrics endpoint's port, when serving one. */
  get metricsPort(): number | null {
    return this.#metricsServer?.port ?? null;
  }

  /**
   * Whether this broker acknowledges writes now: always alone; in a cluster, while its lease is
   * held and, after a lapse, a scan confirmed what it still leads [C1]. A broker cut off from the
   * control store keeps serving the partitions others took from it meanwhile until that scan, but
   * acknowledges nothing: while this is false, what it leads may be another broker's already.
   */
  get acknowledging(): boolean {
    return this.#cluster?.leaseHeld() ?? true;
  }

  /** Stops listening, ends every connection, flushes and closes the engine, then resigns its lease. */
  async stop(): Promise<void> {
    this.#cluster?.stop();
    this.#server.stop();
    void this.#metricsServer?.stop(true);
    this.#offsetExpiry.stop();
    this.context.groups.close();
    // Flush the WAL before giving up the lease: a successor seals this stream when it takes over.
    await this.context.engine.close();
    await this.#cluster?.resign().catch(() => {}); // if it fails, the lease simply runs out
  }
}

/** Counts requests and times their handling per API (ferry_broker_requests_total, ..._request_latency_ms). */
// biome-ignore lint: the binding table holds every API's request and response types
function instrument(registry: MetricsRegistry, clock: Clock, table: ApiBinding<any, any>[]): ApiBinding<any, any>[] {
  return table.map((binding) => {
    const labels = { api: binding.codec.name };
    const requests = registry.counter('ferry_broker_requests_total', 'Kafka requests handled, by API', { labels });
    const latency = registry.histogram('ferry_broker_request_latency_ms', 'Time from decoding a request to its response, by API (long-poll waits included)', { labels });
    return {
      ...binding,
      async handle(request, context) {
        const started = clock.monotonicMs();
        try {
          return await binding.handle(request, context);
        } finally {
          requests.add();
          latency.record(clock.monotonicMs() - started);
        }
      },
    };
  });
}

// biome-ignore lint: the binding table holds every API's request and response types
function bindings(context: () => BrokerContext): ApiBinding<any, any>[] {
  let router: Router | undefined;
  const table: ApiBinding<any, any>[] = [
    { codec: apiVersionsCodec, handle: () => ({ errorCode: 0, apiKeys: router!.apiVersions(), throttleTimeMs: 0 }) },
    { codec: metadataCodec, handle: (request, { header }) => handleMetadata(context(), request, header.apiVersion) },
    { codec: produceCodec, handle: (request) => handleProduce(context(), request), refuseVersion: refuseOldProduce },
    { codec: fetchCodec, handle: (request, { peer }) => handleFetch(context(), request, peer), refuseVersion: refuseOldFetch },
    { codec: listOffsetsCodec, handle: (request) => handleListOffsets(context(), request) },
    { codec: initProducerIdCodec, handle: (request) => handleInitProducerId(context(), request) },
    { codec: findCoordinatorCodec, handle: (request) => handleFindCoordinator(context(), request) },
    { codec: joinGroupCodec, handle: (request, { header, peer }) => handleJoinGroup(context(), request, header.clientId ?? '', `/${peer}`) },
    { codec: syncGroupCodec, handle: (request) => handleSyncGroup(context(), request) },
    { codec: heartbeatCodec, handle: (request) => handleHeartbeat(context(), request) },
    { codec: leaveGroupCodec, handle: (request) => handleLeaveGroup(context(), request) },
    { codec: offsetCommitCodec, handle: (request) => handleOffsetCommit(context(), request) },
    { codec: offsetFetchCodec, handle: (request) => handleOffsetFetch(context(), request) },
    { codec: createTopicsCodec, handle: (request) => handleCreateTopics(context(), request) },
    { codec: deleteTopicsCodec, handle: (request) => handleDeleteTopics(context(), request) },
    { codec: describeConfigsCodec, handle: (request) => handleDescribeConfigs(context(), request) },
    { codec: offsetForLeaderEpochCodec, handle: (request) => handleOffsetForLeaderEpoch(context(), request) },
    { codec: listGroupsCodec, handle: (request) => handleListGroups(context(), request) },
    { codec: describeGroupsCodec, handle: (request, { header }) => handleDescribeGroups(context(), request, header.apiVersion) },
    { codec: deleteGroupsCodec, handle: (request) => handleDeleteGroups(context(), request) },
    { codec: offsetDeleteCodec, handle: (request) => handleOffsetDelete(context(), request) },
    { codec: describeClusterCodec, handle: (request) => handleDescribeCluster(context(), request) },
    { codec: alterConfigsCodec, handle: (request) => handleAlterConfigs(context(), request) },
    { codec: incrementalAlterConfigsCodec, handle: (request) => handleIncrementalAlterConfigs(context(), request) },
    { codec: createPartitionsCodec, handle: (request) => handleCreatePartitions(context(), request) },
    { codec: deleteRecordsCodec, handle: (request) => handleDeleteRecords(context(), request) },
    { codec: describeProducersCodec, handle: (request) => handleDescribeProducers(context(), request) },
    { codec: describeLogDirsCodec, handle: (request) => handleDescribeLogDirs(context(), request) },
    { codec: describeAclsCodec, handle: () => handleDescribeAcls() },
    { codec: createAclsCodec, handle: (request) => handleCreateAcls(request) },
    { codec: deleteAclsCodec, handle: (request) => handleDeleteAcls(request) },
  ];
  router = new Router(table);
  return table;
}

/** A cluster's tier learns which topic incarnations live from the topic records (its engine's registry holds only what it adopted). */
function tierOf(options: BrokerOptions): Pick<FerryOptions, 'tier'> {
  const { tier } = options.engine;
  if (tier === undefined || options.cluster === undefined || tier.liveTopicIds !== undefined) return {};
  return { tier: { ...tier, liveTopicIds: clusterLiveTopicIds(new ControlStore(options.cluster.store, options.cluster.prefix ?? '')) } };
}
