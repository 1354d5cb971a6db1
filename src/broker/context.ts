import type { Engine } from '../engine/index.ts';
import type { Clock } from '../util/clock.ts';
import type { GroupCoordinator } from './groups/coordinator.ts';
import type { GroupOffsetStore } from './groups/offset-store.ts';
import type { ProducerIds } from './producers.ts';
import type { Topology } from './topology.ts';
import type { BrokerSecurity } from './auth/broker-security.ts';
import type { ListenerEndpoint } from '../cluster/endpoints.ts';

/** What every handler may use: this broker's identity, its engine and its coordinators. */
export interface BrokerContext {
  readonly nodeId: number;
  /** Host and port clients are told to connect to (Metadata, FindCoordinator). */
  readonly advertisedHost: string;
  readonly advertisedPort: number;
  readonly rack: string | null;
  readonly clusterId: string;
  readonly engine: Engine;
  readonly clock: Clock;
  readonly groups: GroupCoordinator;
  readonly offsets: GroupOffsetStore;
  readonly producers: ProducerIds;
  /** Who leads what: this broker alone, or the cluster's control records. */
  readonly topology: Topology;
  /** Create a topic with `defaultPartitions` when a client asks for one that does not exist. */
  readonly autoCreateTopics: boolean;
  readonly defaultPartitions: number;
  /** Replicas of a topic created without a replication factor (a cluster's; 1 for a single broker). Absent: 1. */
  readonly defaultReplicationFactor?: number;
  /** Who may do what: the ACLs (a null authorizer allows everything), the SCRAM credentials, the inter-broker listener. */
  readonly security: Pick<BrokerSecurity, 'authorizer' | 'acls' | 'scram' | 'interBrokerListener' | 'quotas'>;
  /** This broker's listeners as clients reach them (advertised.listeners), first listener first. */
  readonly endpoints: readonly ListenerEndpoint[];
}

/** Kafka's "no timestamp" value. */
export const NO_TIMESTAMP = -1;
