import { ClusterNode } from '../cluster/node.ts';
import { ControlStore } from '../cluster/control-store.ts';
import { rebuildFromChain } from '../cluster/rebuild.ts';
import { StreamTails } from '../cluster/stream-tails.ts';
import { LeaderProgress } from '../cluster/leader-progress.ts';
import { RegisteredAddresses } from '../cluster/replica-address.ts';
import type { PartitionRecord } from '../cluster/node.ts';
import { Ferry, FerryError, type FerryOptions, type WalOptions } from '../engine/index.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { SeededRandom } from '../util/random.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../wal/reader.ts';
import { ensureSealed } from '../wal/seal.ts';
import { type BrokerAddress, ClusterTopology, SingleBrokerTopology } from './topology.ts';
import type { Clock } from '../util/clock.ts';
import { systemClock } from '../util/clock.ts';
import { apiVersionsCodec } from './apis/api-versions.ts';
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
import { handleFindCoordinator, handleInitProducerId } from './handlers/coordinator.ts';
import { handleFetch } from './handlers/fetch.ts';
import { handleHeartbeat, handleJoinGroup, handleLeaveGroup, handleOffsetCommit, handleOffsetFetch, handleSyncGroup } from './handlers/groups.ts';
import { handleListOffsets } from './handlers/list-offsets.ts';
import { handleMetadata } from './handlers/metadata.ts';
import { handleOffsetForLeaderEpoch } from './handlers/offset-for-leader-epoch.ts';
import { handleProduce } from './handlers/produce.ts';
import { handleCreateTopics, handleDeleteTopics, handleDescribeConfigs } from './handlers/topics.ts';
import { ProducerIds } from './producers.ts';
import { type ApiBinding, Router } from './router.ts';
import { KafkaServer } from './server.ts';
import type { Server } from 'bun';
import { MetricsRegistry } from '../metrics/index.ts';
import { serveMetrics } from './metrics-endpoint.ts';
import { checkStores } from './store-check.ts';
import { definedOnly } from '../util/defined-only.ts';

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
  readonly log?: (message: string) => void;
  /** Serve Prometheus metrics on this address (GET /metrics); none when absent. */
  readonly metricsListen?: { readonly host: string; readonly port: number };
  /** Share partitions with other brokers through control records (docs/cluster-protocol.md). */
  readonly cluster?: ClusterOptions;
  /** Start on stores that ignore conditional writes (single-broker experiments only); checked at start otherwise. */
  readonly unsafeStore?: boolean;
  /** Connections open at once; more are closed on arrival (Kafka's max.connections). */
  readonly maxConnections?: number;
  /** A connection silent this long with no request in hand is closed (Kafka's connections.max.idle.ms). */
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
}

const CLUSTER_ID_DEFAULT = 'ferry-cluster';
/**
 * How often a follower partition probes the leader's stream for its next object: 5 ms while data
 * flows, backing off to 50 ms while the stream is idle. A probe of a missing object is a billed
 * GET (200/s at 5 ms, 20/s at 50 ms); the cost is up to 50 ms more acks=all latency with
 * min.insync.replicas > 1 after an idle spell.
 */
const REPLICA_POLL_INTERVAL_MS = 5;
const REPLICA_POLL_INTERVAL_MAX_MS = 50;
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
    const engine = await Ferry.open({ ...options.engine, clock, metrics, ...(options.log === undefined ? {} : { report: options.log }), managedPartitions: options.cluster !== undefined, ...(options.minInsyncReplicas === undefined ? {} : { minInsyncReplicas: options.minInsyncReplicas }) });
    let context: BrokerContext | undefined;
    const router = new Router(instrument(metrics, clock, bindings(() => context!)));
    const server = KafkaServer.listen({ hostname: options.listenHost, port: options.listenPort, router, clock, metrics, ...definedOnly({ log: options.log, maxConnections: options.maxConnections, connectionsMaxIdleMs: options.connectionsMaxIdleMs, queuedMaxRequestBytes: options.queuedMaxRequestBytes }) });
    const self = { nodeId: options.nodeId, host: options.advertisedHost ?? options.listenHost, port: options.advertisedPort ?? server.port, rack: options.rack ?? null };
    const producers = new ProducerIds(options.engine.directory, options.nodeId);
    const cluster = options.cluster === undefined ? null : clusterNode(options.cluster, self, engine, options.engine.wal!, clock, options.log, metrics);
    context = {
      nodeId: options.nodeId,
      advertisedHost: self.host,
      advertisedPort: self.port,
      rack: self.rack,
      clusterId: options.clusterId ?? CLUSTER_ID_DEFAULT,
      engine,
      clock,
      groups: new GroupCoordinator(clock),
      offsets: options.cluster === undefined ? OffsetStore.open(options.engine.directory) : new ControlOffsetStore(new ControlStore(options.cluster.store, options.cluster.prefix ?? '')),
      producers,
      topology: cluster === null ? new SingleBrokerTopology(self, engine) : new ClusterTopology(cluster, options.defaultReplicationFactor ?? 1, new RegisteredAddresses(clock)),
      autoCreateTopics: options.autoCreateTopics ?? true,
      defaultPartitions: options.defaultPartitions ?? DEFAULT_PARTITIONS,
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
  }

  get port(): number {
    return this.#server.port;
  }

  /** The metrics endpoint's port, when serving one. */
  get metricsPort(): number | null {
    return this.#metricsServer?.port ?? null;
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

/**
 * The cluster side of a broker: its lease and claims, and how it adopts a claimed partition:
 * seal the chain's other streams [C4], rebuild the log (and with it the producer state) from them [C5].
 */
function clusterNode(options: ClusterOptions, self: BrokerAddress, engine: Ferry, wal: WalOptions, clock: Clock, log?: (message: string) => void, metrics?: MetricsRegistry): ClusterNode {
  const prefix = wal.prefix ?? '';
  const stream = engine.wal!.config.stream;
  const control = new ControlStore(options.store, options.prefix ?? '');
  const tails = new StreamTails({
    store: wal.store,
    prefix,
    clock,
    random: new SeededRandom(self.nodeId),
    pollIntervalMs: REPLICA_POLL_INTERVAL_MS,
    pollIntervalMaxMs: REPLICA_POLL_INTERVAL_MAX_MS,
    readChain: async (topic, partition) => (await control.read<PartitionRecord>(`partitions/${topic}/${partition}`))?.value.chain ?? [],
    ...(log === undefined ? {} : { report: log }),
    ...(metrics === undefined ? {} : { metrics }),
  });
  const node: ClusterNode = new ClusterNode({
    control,
    self: { ...self, stream, leaseMs: options.leaseMs },
    clock,
    scanIntervalMs: options.scanIntervalMs,
    async adopt(topic, partition, partitions, record) {
      const earlier = record.chain.filter((s) => s.writerId !== stream.writerId || s.epoch !== stream.epoch);
      for (const other of earlier) await ensureSealed(wal.store, prefix, other, { writerId: stream.writerId, nowMs: clock.nowMs() });
      const reader = new WalReader(wal.store, { ...DEFAULT_WAL_READER_CONFIG, prefix, wants: (t, p, id) => t === topic && p === partition && id === record.topicId }, { clock, random: new SeededRandom(self.nodeId) });
      await engine.adoptPartition(topic, record.topicId, partition, partitions, async (partitionLog) => {
        await rebuildFromChain(reader, partitionLog, earlier, record.topicId);
      }, 'leader', node.topics().get(topic)?.replicationFactor ?? 1, record.leaderEpoch);
      log?.(`serving ${topic}-${partition} up to offset ${engine.offsetFor(topic, partition, -1).offset} (leader epoch ${record.leaderEpoch})`);
    },
    release: (topic, partition) => engine.releasePartition(topic, partition),
    async follow(topic, partition, partitions, record) {
      const reader = new WalReader(wal.store, { ...DEFAULT_WAL_READER_CONFIG, prefix, wants: (t, p, id) => t === topic && p === partition && id === record.topicId }, { clock, random: new SeededRandom(self.nodeId) });
      const sealed = record.chain.slice(0, -1); // the leader sealed them when it took over
      const follower = await engine.adoptPartition(topic, record.topicId, partition, partitions, async (partitionLog) => void (await rebuildFromChain(reader, partitionLog, sealed, record.topicId)), 'follower', 1, record.leaderEpoch);
      progress.follow(topic, partition, () => follower.log.logEndOffset); // reports what the rebuild brought
      const applied = () => {
        follower.noteApplied();
        progress.applied(topic, partition);
      };
      tails.follow({ topic, topicId: record.topicId, partition, log: follower.log, applied }, record.chain);
    },
    async unfollow(topic, partition) {
      tails.unfollow(topic, partition);
      progress.unfollow(topic, partition);
      await engine.releasePartition(topic, partition);
    },
    async forget(topic) {
      for (const partition of progress.unfollowTopic(topic)) tails.unfollow(topic, partition);
      await engine.deleteTopic(topic).catch(() => {}); // nothing of it was served here
    },
    stopped() {
      tails.stopAll();
      progress.close();
    },
    scanned() {
      progress.retarget();
      engine.followLeaderEpochs((topic, partition) => node.leaderOf(topic, partition)?.record.leaderEpoch ?? null);
      engine.replicasChanged();
    },
    ...(log === undefined ? {} : { log }),
  });
  const progress = new LeaderProgress({
    replicaId: self.nodeId,
    clock,
    leaderOf: (topic, partition) => node.leaderOf(topic, partition)?.broker ?? null,
    leaderHighWatermark: (topic, partition, highWatermark) => engine.noteLeaderHighWatermark(topic, partition, highWatermark),
  });
  // A leader partition counts only its replica set's followers with a live lease (src/replica/isr.ts I1).
  engine.useReplicaMembership({ followersOf: (topic, partition) => new Set(node.followersOf(topic, partition).map((b) => `broker-${b.nodeId}`)) });
  return node;
}

/** Counts requests and times their handling per API (ferry_broker_requests_total, ..._request_latency_ms). */
// biome-ignore lint: the binding table holds every API's request and response types
function instrument(registry: MetricsRegistry, clock: Clock, table: ApiBinding<any, any>[]): ApiBinding<any, any>[] {
  return table.map((binding) => {
    const labels = { api: binding.codec.name };
    const requests = registry.counter('ferry_broker_requests_total', 'Kafka requests handled, by API', { labels });
    const latency = registry.histogram('ferry_broker_request_latency_ms', 'Time from decoding a request to its response, by API (long-poll waits included)', { labels });
    return {
      codec: binding.codec,
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
    { codec: metadataCodec, handle: (request) => handleMetadata(context(), request) },
    { codec: produceCodec, handle: (request) => handleProduce(context(), request) },
    { codec: fetchCodec, handle: (request, { peer }) => handleFetch(context(), request, peer) },
    { codec: listOffsetsCodec, handle: (request) => handleListOffsets(context(), request) },
    { codec: initProducerIdCodec, handle: (request) => handleInitProducerId(context(), request) },
    { codec: findCoordinatorCodec, handle: (request) => handleFindCoordinator(context(), request) },
    { codec: joinGroupCodec, handle: (request, { header }) => handleJoinGroup(context(), request, header.clientId ?? '') },
    { codec: syncGroupCodec, handle: (request) => handleSyncGroup(context(), request) },
    { codec: heartbeatCodec, handle: (request) => handleHeartbeat(context(), request) },
    { codec: leaveGroupCodec, handle: (request) => handleLeaveGroup(context(), request) },
    { codec: offsetCommitCodec, handle: (request) => handleOffsetCommit(context(), request) },
    { codec: offsetFetchCodec, handle: (request) => handleOffsetFetch(context(), request) },
    { codec: createTopicsCodec, handle: (request) => handleCreateTopics(context(), request) },
    { codec: deleteTopicsCodec, handle: (request) => handleDeleteTopics(context(), request) },
    { codec: describeConfigsCodec, handle: (request) => handleDescribeConfigs(context(), request) },
    { codec: offsetForLeaderEpochCodec, handle: (request) => handleOffsetForLeaderEpoch(context(), request) },
  ];
  router = new Router(table);
  return table;
}
