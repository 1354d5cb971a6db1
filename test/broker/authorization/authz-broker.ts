// A single broker's handler context with a real Authorizer, for the authorization tests: topic `t`
// (one partition, one record), group ids and transactional ids free. Each test opens its own and
// closes it (withBroker), so that what one probe changes (a deleted topic) never reaches another.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrokerContext } from '../../../src/broker/context.ts';
import { GroupCoordinator } from '../../../src/broker/groups/coordinator.ts';
import { OffsetStore } from '../../../src/broker/groups/offset-store.ts';
import { FileProducerIdBlocks, ProducerIds } from '../../../src/broker/producers.ts';
import { type BrokerAddress, SingleBrokerTopology, type Topology } from '../../../src/broker/topology.ts';
import type { ListenerEndpoint } from '../../../src/cluster/endpoints.ts';
import { Engine } from '../../../src/engine/index.ts';
import { Authorizer } from '../../../src/security/acl/authorizer.ts';
import type { AclBinding } from '../../../src/security/acl/model.ts';
import { parsePrincipal } from '../../../src/security/principal.ts';
import type { Session } from '../../../src/security/session.ts';
import { ManualClock } from '../../../src/util/clock.ts';
import { batchOf } from '../../support/batches.ts';
import { brokerSecurity } from '../../support/broker-security.ts';
import { resourcesOf } from '../../security/acl/helpers.ts';

export const TOPIC = 't';
export const NODE_ID = 1;
/** The principal the tests grant ACLs to, one with none, and the super user. */
export const ALICE = 'User:alice';
export const BOB = 'User:bob';
export const ADMIN = 'User:admin';

export interface BrokerOptions {
  /** null: no authorizer at all (authorizer.class.name unset). */
  readonly acls?: readonly AclBinding[] | null;
  readonly superUsers?: readonly string[];
  readonly allowEveryoneIfNoAclFound?: boolean;
  readonly interBrokerListener?: string | null;
  /** This broker's listeners (absent: one PLAINTEXT listener at 127.0.0.1:9092). */
  readonly endpoints?: readonly ListenerEndpoint[];
  /** Replaces the single-broker topology (listener tests with several brokers). */
  readonly topology?: (engine: Engine, self: BrokerAddress) => Topology;
  readonly autoCreateTopics?: boolean;
}

export interface AuthzBroker {
  readonly context: BrokerContext;
  readonly engine: Engine;
  /** The authorizer, null without one. */
  readonly authorizer: Authorizer | null;
}

/** A session of `principal` on `listener` from 10.0.0.1. */
export function sessionOf(principal: string, listener = 'PLAINTEXT'): Session {
  return { principal: parsePrincipal(principal)!, clientAddress: '10.0.0.1', listenerName: listener, securityProtocol: 'PLAINTEXT', saslMechanism: null };
}

/** Runs `body` against a fresh broker, closed and removed afterwards. */
export async function withBroker<T>(options: BrokerOptions, body: (broker: AuthzBroker) => Promise<T>): Promise<T> {
  const directory = mkdtempSync(join(tmpdir(), 'ferry-authz-'));
  const engine = await Engine.open({ directory, log: { flush: { kind: 'none' } } });
  try {
    await engine.createTopic(TOPIC, { partitions: 1 });
    await (await engine.appendBatches(TOPIC, 0, batchOf('a', 1))).committed;
    const authorizer = options.acls === null ? null : new Authorizer({ superUsers: options.superUsers ?? [ADMIN], allowEveryoneIfNoAclFound: options.allowEveryoneIfNoAclFound ?? false });
    authorizer?.load(resourcesOf(options.acls ?? []));
    const endpoints = options.endpoints ?? [{ listener: 'PLAINTEXT', host: '127.0.0.1', port: 9092 }];
    const first = endpoints[0]!;
    const self: BrokerAddress = { nodeId: NODE_ID, host: first.host, port: first.port, rack: null, ...(options.endpoints === undefined ? {} : { endpoints }) };
    const clock = new ManualClock();
    const context: BrokerContext = {
      nodeId: NODE_ID,
      advertisedHost: first.host,
      advertisedPort: first.port,
      rack: null,
      clusterId: 'authz',
      engine,
      clock,
      groups: new GroupCoordinator(clock),
      offsets: OffsetStore.open(directory),
      producers: new ProducerIds(new FileProducerIdBlocks(directory, NODE_ID)),
      topology: options.topology?.(engine, self) ?? new SingleBrokerTopology(self, engine),
      autoCreateTopics: options.autoCreateTopics ?? true,
      defaultPartitions: 1,
      security: brokerSecurity({ authorizer, interBrokerListener: options.interBrokerListener ?? null }),
      endpoints,
    };
    return await body({ context, engine, authorizer });
  } finally {
    await engine.close();
    rmSync(directory, { recursive: true, force: true });
  }
}
