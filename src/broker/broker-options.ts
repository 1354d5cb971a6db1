import type { EngineOptions } from '../engine/index.ts';
import type { LoggerOption } from '../observability/logger.ts';
import type { ObjectStore } from '../store/object-store.ts';
import type { Clock } from '../util/clock.ts';
import type { Network } from '../util/network.ts';
import type { Random } from '../util/random.ts';
import type { BrokerSecurityOptions } from './auth/broker-security.ts';
import type { ListenerConfig } from './auth/listener-config.ts';

/** How Broker.start sets a broker up: where it listens, its node id, and the engine it serves (`engine`, Ferry's EngineOptions). */
export interface BrokerOptions {
  /** The address to listen on (the first listener's, when `listeners` is given). */
  readonly listenHost: string;
  /** 0 picks a free port (tests). */
  readonly listenPort: number;
  /** What clients are told to connect to; the listen address by default. */
  readonly advertisedHost?: string;
  /** See advertisedHost; the listen port by default. */
  readonly advertisedPort?: number;
  /** This broker's id (Kafka's node.id); a single broker's is at most 2097151 (its producer ids derive from it). */
  readonly nodeId: number;
  /** Its rack or availability zone (broker.rack): consumers with client.rack read from a replica there. */
  readonly rack?: string | null;
  /** The cluster id Metadata reports; default ferry-cluster. */
  readonly clusterId?: string;
  /** Create a topic when a client first names it (auto.create.topics.enable); default true. */
  readonly autoCreateTopics?: boolean;
  /** Partitions of an auto-created topic (num.partitions); default 1. */
  readonly defaultPartitions?: number;
  /** Replication factor of auto-created topics and of CreateTopics asking for the default (cluster mode). */
  readonly defaultReplicationFactor?: number;
  /** acks=all waits for this many replicas, the leader included (capped at the topic's replication factor). */
  readonly minInsyncReplicas?: number;
  /**
   * The engine this broker serves (directory, WAL store, log settings). Whether a cluster manages
   * it is the broker's to decide (`cluster`, or a WAL store: src/broker/placement.ts), never the caller's.
   */
  readonly engine: Omit<EngineOptions, 'cluster'>;
  /** Time for timers, leases and throttles: the system's unless a simulation injects its own. */
  readonly clock?: Clock;
  /** The sockets it listens on and reports to leaders through; the operating system's by default (the simulation's in src/sim/network.ts). */
  readonly network?: Network;
  /** Draws topic ids, the cluster incarnation and retry jitter; the operating system's randomness by default. Overrides engine.random. */
  readonly random?: Random;
  /**
   * Where the broker and its engine log (a Logger such as pino's, or a function given each
   * message); every line carries `component`, and `topic` and `partition` where one partition is
   * concerned. Default: warn and above as JSON lines on stderr.
   */
  readonly log?: LoggerOption;
  /** Serve Prometheus metrics on this address (GET /metrics); none when absent. */
  readonly metricsListen?: {
    /** The address to listen on. */
    readonly host: string;
    /** The port; 0 picks a free one (Broker.metricsPort). */
    readonly port: number;
  };
  /** Share partitions with other brokers through control records (docs/cluster-protocol.md). */
  readonly cluster?: ClusterOptions;
  /** Without `cluster`, a broker with a WAL store is a cluster of one: its lease and scan interval (default LONE_LEASE_MS, LONE_SCAN_INTERVAL_MS). */
  readonly lone?: {
    /** How long its lease lasts: past it, unrenewed, it acknowledges nothing (docs/cluster-protocol.md [C1]). */
    readonly leaseMs: number;
    /** How often it reads its control records again. */
    readonly scanIntervalMs: number;
  };
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
  /**
   * Kafka's listeners, each with its security protocol (PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL)
   * and settings; the first is the one the broker record's host and port name. Absent: one
   * PLAINTEXT listener at listenHost:listenPort, advertised as advertisedHost:advertisedPort.
   */
  readonly listeners?: readonly ListenerConfig[];
  /** Authorization (ACLs), the inter-broker client, per-IP limits, the failed-authentication delay (docs/security.md). */
  readonly security?: BrokerSecurityOptions;
}

/** A broker in a cluster (docs/cluster-protocol.md): the control records it shares with the others, and its lease. */
export interface ClusterOptions {
  /** Where the control records live (may be another bucket than the WAL data). */
  readonly store: ObjectStore;
  /** Key prefix of the control records in that store; default none. */
  readonly prefix?: string;
  /** A broker silent this long is dead to the others and its partitions are taken over. */
  readonly leaseMs: number;
  /** How often leadership is re-examined (the other brokers' records read). */
  readonly scanIntervalMs: number;
  /**
   * [K1] The port of this broker's peer listener, on its listen host: the other brokers hold a
   * connection to it and take over at once when this process exits (kill -9 included), rather than
   * after its lease. 0 (the default) picks a free port, published in the broker record; null: none.
   */
  readonly peerPort?: number | null;
}
