import { join } from 'node:path';
import { ClusterEnginePolicy } from '../cluster/engine-policy.ts';
import { clusterMember } from '../cluster/member.ts';
import type { ClusterNode } from '../cluster/node.ts';
import { RegisteredAddresses } from '../cluster/replica-address.ts';
import { ControlStore } from '../control/control-store.ts';
import { FerryError } from '../errors.ts';
import type { Engine, EngineOptions } from '../engine/index.ts';
import type { MetricsRegistry } from '../metrics/index.ts';
import type { Logger } from '../observability/logger.ts';
import { FileStore } from '../store/file.ts';
import type { ObjectStore } from '../store/object-store.ts';
import { DeletedIncarnations } from '../tier/deleted-incarnations.ts';
import type { Clock } from '../util/clock.ts';
import { assert } from '../util/assert.ts';
import { definedOnly } from '../util/defined-only.ts';
import { systemDisk } from '../util/disk.ts';
import { regressed } from '../util/regressions.ts';
import type { BrokerSecurity } from './auth/broker-security.ts';
import type { BrokerOptions, ClusterOptions } from './broker-options.ts';
import { ControlOffsetStore, type GroupOffsetStore, OffsetStore } from './groups/offset-store.ts';
import { type LoneMigration, migrateLoneDirectory } from './lone-migration.ts';
import { ControlProducerIdBlocks, FileProducerIdBlocks, type ProducerIdBlocks } from './producers.ts';
import { type BrokerAddress, ClusterTopology, SingleBrokerTopology, type Topology } from './topology.ts';

/** A lone broker's lease: as the CLI's default for a cluster (it waits on no other broker's). */
const LONE_LEASE_MS = 10_000;
/** A lone broker's scan: as the CLI's default. */
const LONE_SCAN_INTERVAL_MS = 1000;
/** A single broker without a WAL store keeps its security records here, in its log directory. */
const SECURITY_FILE_STORE_DIRECTORY = 'security-records';

/** What a placement joins with, once the broker's listeners are up and its address known. */
export interface JoinDeps {
  readonly engine: Engine;
  readonly self: BrokerAddress;
  readonly security: BrokerSecurity;
  readonly clock: Clock;
  readonly metrics: MetricsRegistry;
  readonly log: Logger;
}

/**
 * Where a broker's state lives, chosen once by Broker.start (placementOf): alone on its own disk
 * (a broker without a WAL store), or in a cluster's control records (every broker with a WAL
 * store: one without a cluster store is a cluster of one over its WAL store, docs/design.md
 * contract 14). Broker.start asks it, step by step, for each part that differs, in the order it
 * always has.
 */
export interface BrokerPlacement {
  /** What the engine opens with here: a cluster's policy, and its tier's deleted incarnations. */
  readonly engineOptions: Pick<EngineOptions, 'cluster' | 'tier'>;
  /** Replication factor of auto-created topics and of CreateTopics asking for the default. */
  readonly defaultReplicationFactor: number;
  /** Where the security records (ACLs, SCRAM credentials) live. */
  securityStore(): Promise<{ store: ObjectStore; prefix: string }>;
  /** Where producer-id blocks are reserved. */
  producerIdBlocks(): ProducerIdBlocks;
  /** Joins the cluster (a ClusterNode not yet started); null alone. */
  join(deps: JoinDeps): ClusterNode | null;
  /** Where group offsets are committed. */
  groupOffsets(): GroupOffsetStore;
  /** How Metadata, FindCoordinator and the admin APIs see the brokers and topics. */
  topology(deps: JoinDeps): Topology;
  /** Before the broker serves: a lone directory moved into the control records, the cluster's first scan. */
  beforeServing(deps: JoinDeps): Promise<void>;
}

/** The one place a broker is made single or clustered. */
export function placementOf(given: BrokerOptions, options: BrokerOptions): BrokerPlacement {
  const wal = options.engine.wal;
  if (options.cluster !== undefined && wal === undefined) throw new FerryError('InvalidArgument', 'a cluster broker needs a WAL store: its partitions move through it');
  if (options.cluster !== undefined) return new ClusterPlacement(options, options.cluster, false);
  if (wal === undefined || regressed('lone-broker-disk-is-truth')) return new SinglePlacement(options);
  const { leaseMs, scanIntervalMs } = given.lone ?? { leaseMs: LONE_LEASE_MS, scanIntervalMs: LONE_SCAN_INTERVAL_MS };
  return new ClusterPlacement(options, { store: wal.store, prefix: wal.prefix ?? '', leaseMs, scanIntervalMs, peerPort: null }, true);
}

/** A broker alone on its disk (no WAL store): its topics, producer ids and offsets are its directory's. */
class SinglePlacement implements BrokerPlacement {
  readonly #options: BrokerOptions;
  /** Alone: no cluster manages the engine, whatever a caller's engine options carried (a JavaScript caller's are not type-checked). */
  readonly engineOptions = { cluster: undefined };
  readonly defaultReplicationFactor = 1;

  constructor(options: BrokerOptions) {
    this.#options = options;
  }

  async securityStore(): Promise<{ store: ObjectStore; prefix: string }> {
    const { engine } = this.#options;
    // A single broker's WAL store keeps them, so that a stateless broker started on an empty disk keeps them.
    if (engine.wal !== undefined) return { store: engine.wal.store, prefix: engine.wal.prefix ?? '' };
    return { store: await FileStore.open(join(engine.directory, SECURITY_FILE_STORE_DIRECTORY)), prefix: '' };
  }

  producerIdBlocks(): ProducerIdBlocks {
    return new FileProducerIdBlocks(this.#options.engine.directory, this.#options.nodeId, this.#options.engine.disk);
  }

  join(): null {
    return null;
  }

  groupOffsets(): GroupOffsetStore {
    return OffsetStore.open(this.#options.engine.directory, this.#options.engine.disk);
  }

  topology({ self, engine }: JoinDeps): Topology {
    return new SingleBrokerTopology(self, engine);
  }

  async beforeServing(): Promise<void> {}
}

/**
 * A broker in a cluster (docs/cluster-protocol.md), or a cluster of one (`lone`): the engine is
 * managed from its open on, producer ids and group offsets live in the control records, and the
 * broker serves once its first scan ran (a lone broker first moves what its directory held from
 * before it was one, issue 24).
 */
class ClusterPlacement implements BrokerPlacement {
  readonly #options: BrokerOptions;
  readonly #cluster: ClusterOptions;
  readonly #lone: boolean;
  /** The engine's cluster policy: it answers from the node once the broker joins. */
  readonly #policy: ClusterEnginePolicy;
  readonly engineOptions: Pick<EngineOptions, 'cluster' | 'tier'>;
  readonly defaultReplicationFactor: number;
  #blocks: ControlProducerIdBlocks | null = null;
  #node: ClusterNode | null = null;
  #offsets: ControlOffsetStore | null = null;

  constructor(options: BrokerOptions, cluster: ClusterOptions, lone: boolean) {
    assert(options.engine.wal !== undefined, 'a cluster placement has a WAL store (placementOf checks it)');
    this.#options = options;
    this.#cluster = cluster;
    this.#lone = lone;
    this.#policy = new ClusterEnginePolicy(options.nodeId);
    this.engineOptions = { cluster: this.#policy, ...this.#tierOf() };
    this.defaultReplicationFactor = options.defaultReplicationFactor ?? 1;
  }

  async securityStore(): Promise<{ store: ObjectStore; prefix: string }> {
    return { store: this.#cluster.store, prefix: this.#cluster.prefix ?? '' };
  }

  /** A cluster reserves producer ids in its control records: its brokers' disks are not their state. */
  producerIdBlocks(): ProducerIdBlocks {
    this.#blocks = new ControlProducerIdBlocks(this.#control());
    return this.#blocks;
  }

  join({ engine, self, security, clock, metrics, log }: JoinDeps): ClusterNode {
    const { engine: engineOptions } = this.#options;
    this.#node = clusterMember({
      controlStore: this.#cluster.store,
      controlPrefix: this.#cluster.prefix ?? '',
      walStore: engineOptions.wal!.store,
      walPrefix: engineOptions.wal!.prefix ?? '',
      self: { ...self, leaseMs: this.#cluster.leaseMs },
      scanIntervalMs: this.#cluster.scanIntervalMs,
      peerListen: this.#cluster.peerPort === null ? null : { host: security.listeners[0]!.config.host, port: this.#cluster.peerPort ?? 0 },
      engine,
      policy: this.#policy,
      clock,
      metrics,
      ...definedOnly({ network: this.#options.network, random: this.#options.random, log, interBroker: security.interBrokerConnector ?? undefined }),
    });
    return this.#node;
  }

  groupOffsets(): GroupOffsetStore {
    const incarnation = this.#joined().incarnation;
    this.#offsets = new ControlOffsetStore(new ControlStore(this.#cluster.store, this.#cluster.prefix ?? '', { ...definedOnly({ random: this.#options.random }), incarnation }), {
      nodeId: this.#options.nodeId,
      incarnation,
    });
    return this.#offsets;
  }

  topology({ engine, clock, security }: JoinDeps): Topology {
    const network = this.#options.network;
    return new ClusterTopology(
      this.#joined(),
      this.defaultReplicationFactor,
      new RegisteredAddresses(clock, network === undefined ? undefined : (host) => network.resolve(host)),
      () => engine.brokerTopicDefaults(),
      engine,
      security.interBrokerListener,
    );
  }

  async beforeServing({ engine, log }: JoinDeps): Promise<void> {
    if (this.#lone) await migrateLoneDirectory(this.#loneMigration(engine, log));
    await this.#joined().start();
  }

  #joined(): ClusterNode {
    assert(this.#node !== null, 'the broker joins its cluster before it asks for its offsets, topology or first scan');
    return this.#node;
  }

  #control(): ControlStore {
    return new ControlStore(this.#cluster.store, this.#cluster.prefix ?? '', definedOnly({ random: this.#options.random }));
  }

  /** A cluster's tier learns which topic incarnations were deleted from the deletion records the cluster writes beside its topic records (DI1). */
  #tierOf(): Pick<EngineOptions, 'tier'> {
    const { tier } = this.#options.engine;
    if (tier === undefined || tier.deletedTopicIds !== undefined) return {};
    const deletions = new DeletedIncarnations(this.#control());
    return { tier: { ...tier, deletedTopicIds: () => deletions.list() } };
  }

  /** What a cluster of one moves from a data directory written before it was one (issue 24). */
  #loneMigration(engine: Engine, log: Logger): LoneMigration {
    const { stream } = engine.wal!.config;
    const options = this.#options;
    const walOptions = options.engine.wal!;
    const disk = options.engine.disk ?? systemDisk;
    return {
      directory: options.engine.directory,
      disk,
      control: this.#control(),
      nodeId: options.nodeId,
      topics: engine.topics(),
      wal: { store: walOptions.store, prefix: walOptions.prefix ?? '', writerId: stream.writerId, currentEpoch: stream.epoch },
      producerIds: this.#blocks!,
      groupOffsets: { from: OffsetStore.open(options.engine.directory, disk), to: this.#offsets! },
      log: log.child({ component: 'broker' }),
    };
  }
}
