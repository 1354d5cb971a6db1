import type { LoggerOption } from '../observability/logger.ts';
import { FerryError } from '../errors.ts';
import type { Engine } from '../engine/index.ts';
import type { ObjectStore } from '../store/object-store.ts';
import type { Clock } from '../util/clock.ts';
import type { Network } from '../util/network.ts';
import type { InterBrokerConnector } from './inter-broker-connection.ts';
import type { Random } from '../util/random.ts';
import { ControlStore } from '../control/control-store.ts';
import { DeletedIncarnations } from '../tier/deleted-incarnations.ts';
import { ClusterNode } from './node.ts';
import type { BrokerRecord, PartitionRecord } from './control-records.ts';
import type { MetricsRegistry } from '../metrics/index.ts';
import { PartitionHost } from './partition-host.ts';
import type { ClusterEnginePolicy } from './engine-policy.ts';
import { PeerLinks } from './peer-links.ts';
import { systemNetwork } from '../util/system-network.ts';

export interface ClusterMemberOptions {
  /** Where the control records live (may be another bucket than the WAL data). */
  readonly controlStore: ObjectStore;
  readonly controlPrefix: string;
  /** Where the WAL streams live. */
  readonly walStore: ObjectStore;
  readonly walPrefix: string;
  /** This broker's address (its stream comes from the engine's writer). */
  readonly self: Omit<BrokerRecord, 'renewedAtMs' | 'stream'>;
  readonly scanIntervalMs: number;
  readonly engine: Engine;
  /** The policy the engine was opened with (EngineOptions.cluster): it answers from this node once joined. */
  readonly policy: ClusterEnginePolicy;
  readonly clock: Clock;
  readonly metrics?: MetricsRegistry;
  /** Where followers' progress reports travel; the operating system's sockets by default. */
  readonly network?: Network;
  /** How progress reports reach a leader's inter-broker listener (TLS, SASL as this broker); plain TCP by default. */
  readonly interBroker?: InterBrokerConnector;
  /** Draws the incarnation and topic ids and jitters retries; the operating system's randomness by default (ids must never repeat). */
  readonly random?: Random;
  /**
   * [K1] Where this broker's peer listener listens (port 0: any free one, published in its broker
   * record); null: no peer links, a dead broker is found by its lease alone.
   */
  readonly peerListen: { readonly host: string; readonly port: number } | null;
  readonly log?: LoggerOption;
}

/**
 * One broker's membership in a cluster (docs/cluster-protocol.md): the node that keeps its lease
 * and claims, the host that adopts, releases and follows partitions on its engine, and the gate
 * that keeps the engine from acting as leader (acknowledging, serving reads as leader) while the
 * lease may have lapsed [C1], L5.
 */
export function clusterMember(options: ClusterMemberOptions): ClusterNode {
  const { engine } = options;
  const wal = engine.wal;
  if (wal === null) throw new FerryError('InvalidArgument', 'a cluster broker needs a WAL store: its partitions move through it');
  const control = new ControlStore(options.controlStore, options.controlPrefix, options.random === undefined ? {} : { random: options.random });
  const log = options.log;
  let node: ClusterNode | undefined;
  const host = new PartitionHost({
    engine,
    store: options.walStore,
    prefix: options.walPrefix,
    nodeId: options.self.nodeId,
    clock: options.clock,
    readChain: async (topic, partition) => (await control.read<PartitionRecord>(`partitions/${topic}/${partition}`))?.value.chain ?? [],
    readRecord: async (topic, partition) => (await control.read<PartitionRecord>(`partitions/${topic}/${partition}`))?.value ?? null,
    replicationFactor: (topic) => node!.topics().get(topic)?.replicationFactor ?? 1,
    leaderOf: (topic, partition) => node!.leaderOf(topic, partition)?.broker ?? null,
    walReadOutcomes: engine.walReadOutcomes,
    ...(options.metrics === undefined ? {} : { metrics: options.metrics }),
    ...(options.network === undefined ? {} : { network: options.network }),
    ...(options.interBroker === undefined ? {} : { connector: options.interBroker }),
    ...(options.random === undefined ? {} : { random: options.random }),
    ...(log === undefined ? {} : { log }),
  });
  const peers =
    options.peerListen === null
      ? undefined
      : new PeerLinks({
          network: options.network ?? systemNetwork,
          listenHost: options.peerListen.host,
          listenPort: options.peerListen.port,
          clock: options.clock,
          ...(log === undefined ? {} : { log }),
        });
  node = new ClusterNode({
    control,
    ...(peers === undefined ? {} : { peers }),
    storage: { failing: () => engine.storageFailing, recheck: () => engine.recheckStorage(), walStoreFailingForMs: () => engine.walStoreFailingForMs() },
    self: { ...options.self, stream: wal.config.stream },
    writer: {
      whenFailed: () => engine.wal!.whenFailed(),
      startNewEpoch: () => engine.startNewWalEpoch(),
    },
    clock: options.clock,
    ...(options.random === undefined ? {} : { random: options.random }),
    scanIntervalMs: options.scanIntervalMs,
    adopt: (topic, partition, partitions, plan, promoted) => host.adopt(topic, partition, partitions, plan, promoted),
    adoptTogether: (adoptions) => host.adoptTogether(adoptions),
    release: (topic, partition) => host.release(topic, partition),
    follow: (topic, partition, partitions, record) => host.follow(topic, partition, partitions, record),
    unfollow: (topic, partition) => host.unfollow(topic, partition),
    followLogStart: (topic, partition, logStartOffset) => host.followLogStart(topic, partition, logStartOffset),
    forget: (topic, topicId) => host.forget(topic, topicId),
    stopped: () => host.stop(),
    scanned() {
      // A follower that stays one across a leader change serves in the new leader's epoch (KIP-320),
      // and reports in it [R2]: the epochs move before the reports are re-targeted.
      engine.followLeaderEpochs((topic, partition) => node!.leaderOf(topic, partition)?.record.leaderEpoch ?? null);
      host.scanned();
      engine.replicasChanged(); // leases and replica sets may have changed: leaders re-check their in-sync sets
    },
    // Topic configs live in the topic records: the engine's partitions take them as they change [the scan], and adoptions use them.
    topicConfigsChanged: (topic, configs) => engine.applyTopicConfigs(topic, configs),
    checkTopicConfigs: (configs, before) => engine.checkTopicConfigs(configs, before),
    ...(log === undefined ? {} : { log }),
  });
  options.policy.join({ node, control, deletions: new DeletedIncarnations(control) });
  return node;
}
