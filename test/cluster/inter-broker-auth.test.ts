// Brokers authenticate each other (issue 13, docs/security.md [A7], [R2] of
// docs/cluster-protocol.md): the inter-broker listener is SASL_SSL, the brokers' principal a super
// user, an authorizer on. A follower's progress reports reach the leader over TLS, authenticated
// (PLAIN or SCRAM), and acks=all completes. A report forged in a follower's name does not count:
// from an unauthenticated client, from a user who is not a broker on the client listener or on the
// inter-broker listener itself, or from a super user on another listener. Closes the gap that
// forged-replica-loopback.test.ts keeps open for clusters without security.
import { afterAll, afterEach, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Kafka, logLevel } from 'kafkajs';
import type { InterBrokerClient } from '../../src/broker/auth/broker-security.ts';
import type { ListenerConfig } from '../../src/broker/auth/listener-config.ts';
import { Broker } from '../../src/broker/broker.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import type { InterBrokerConnector } from '../../src/cluster/inter-broker-connection.ts';
import { ProgressReporter } from '../../src/cluster/progress-reporter.ts';
import { PlainSaslClient } from '../../src/security/sasl/plain.ts';
import { ScramSaslClient } from '../../src/security/sasl/scram-client.ts';
import { saltedPasswordOf } from '../../src/security/scram/credential.ts';
import { SCRAM_SHA_512 } from '../../src/security/scram/mechanism.ts';
import { ScramCredentialStore } from '../../src/security/scram/store.ts';
import { DEFAULT_TLS_SETTINGS } from '../../src/security/tls/tls-settings.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { systemClock } from '../../src/util/clock.ts';
import { makeCertificates, type TestCertificates } from '../support/certificates.ts';
import { tempDir } from '../support/temp-dir.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(60_000);

const BROKER_USER = 'ferry-broker';
const BROKER_PASSWORD = 'broker-secret';
const ADMIN = 'admin';
const ADMIN_PASSWORD = 'admin-secret';
const MALLORY = 'mallory';
const MALLORY_PASSWORD = 'mallory-secret';
const PLAIN_USERS = new Map([
  [BROKER_USER, BROKER_PASSWORD],
  [ADMIN, ADMIN_PASSWORD],
  [MALLORY, MALLORY_PASSWORD],
]);
/** How long acks=all waits in the forgery tests: a report that counted would answer well within it. */
const ACKS_TIMEOUT_MS = 3_000;

const brokers: Broker[] = [];
const directory = mkdtempSync(join(tmpdir(), 'ferry-inter-broker-auth-'));
let certificates: TestCertificates;

beforeAll(() => {
  certificates = makeCertificates(directory, []);
});

afterEach(async () => {
  for (const broker of brokers.splice(0)) await broker.stop().catch(() => {});
});

afterAll(() => rmSync(directory, { recursive: true, force: true }));

/** CLIENT (SASL_PLAINTEXT, PLAIN), INTERNAL (SASL_SSL, PLAIN and SCRAM-SHA-512), OPEN (PLAINTEXT). */
function listeners(internalReauthMs = 0): ListenerConfig[] {
  const sasl = { mechanisms: ['PLAIN'], plainUsers: () => PLAIN_USERS };
  return [
    { name: 'CLIENT', protocol: 'SASL_PLAINTEXT', host: '127.0.0.1', port: 0, sasl },
    {
      name: 'INTERNAL',
      protocol: 'SASL_SSL',
      host: '127.0.0.1',
      port: 0,
      sasl: { ...sasl, mechanisms: ['PLAIN', 'SCRAM-SHA-512'], reauthMs: internalReauthMs },
      tls: { ...DEFAULT_TLS_SETTINGS, keystoreLocation: certificates.serverPemPath },
    },
    { name: 'OPEN', protocol: 'PLAINTEXT', host: '127.0.0.1', port: 0 },
  ];
}

function interBrokerClient(mechanism: 'PLAIN' | 'SCRAM-SHA-512'): InterBrokerClient {
  return { listener: 'INTERNAL', tls: { ...DEFAULT_TLS_SETTINGS, truststoreLocation: certificates.caPath }, sasl: { mechanism, username: BROKER_USER, password: BROKER_PASSWORD } };
}

async function startBroker(store: MemoryStore, nodeId: number, mechanism: 'PLAIN' | 'SCRAM-SHA-512', minInsyncReplicas: number, internalReauthMs = 0): Promise<Broker> {
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId,
    minInsyncReplicas,
    log: () => {},
    listeners: listeners(internalReauthMs),
    security: { interBroker: interBrokerClient(mechanism), authorizer: { superUsers: [`User:${BROKER_USER}`, `User:${ADMIN}`] }, refreshIntervalMs: 100 },
    cluster: { store, leaseMs: 2000, scanIntervalMs: 50 },
    engine: { directory: tempDir(), log: { flush: { kind: 'none' } }, wal: { store, writerId: `broker-${nodeId}`, config: { uploadIntervalMs: 2 } } },
  });
  brokers.push(broker);
  return broker;
}

function adminClient(ports: number[]): Kafka {
  return new Kafka({
    clientId: 'inter-broker-auth',
    brokers: ports.map((port) => `127.0.0.1:${port}`),
    sasl: { mechanism: 'plain', username: ADMIN, password: ADMIN_PASSWORD },
    logLevel: logLevel.NOTHING,
    retry: { retries: 3 },
  });
}

async function createTopic(kafka: Kafka, topic: string): Promise<void> {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 1, replicationFactor: 2 }] });
  await admin.disconnect();
}

function authentications(broker: Broker, mechanism: string): number {
  const series = `ferry_broker_authentications_total{listener="INTERNAL",mechanism="${mechanism}",result="succeeded"} `;
  const line = broker.metrics
    .renderPrometheus()
    .split('\n')
    .find((candidate) => candidate.startsWith(series));
  return line === undefined ? 0 : Number(line.slice(series.length));
}

for (const mechanism of ['PLAIN', 'SCRAM-SHA-512'] as const) {
  test(`two brokers, inter-broker listener SASL_SSL with ${mechanism}: acks=all completes, the follower's reports authenticated and counted`, async () => {
    const store = new MemoryStore();
    if (mechanism !== 'PLAIN') {
      // the brokers' SCRAM credential, in the control records before they start (as `ferry users add` puts it)
      const salt = crypto.getRandomValues(new Uint8Array(32));
      const [result] = await new ScramCredentialStore(new ControlStore(store, '')).alter(
        [],
        [{ name: BROKER_USER, mechanism: SCRAM_SHA_512.type, iterations: 4096, salt, saltedPassword: saltedPasswordOf(SCRAM_SHA_512, BROKER_PASSWORD, salt, 4096) }],
      );
      expect(result?.errorCode).toBe(0);
    }
    const first = await startBroker(store, 1, mechanism, 2);
    const second = await startBroker(store, 2, mechanism, 2);
    const kafka = adminClient([first.portOf('CLIENT')!, second.portOf('CLIENT')!]);
    await createTopic(kafka, 'replicated');
    let leader: Broker | undefined;
    let follower: Broker | undefined;
    await until(() => {
      leader = brokers.find((broker) => broker.context.engine.leads('replicated', 0));
      follower = brokers.find((broker) => broker !== leader && broker.context.engine.serves('replicated', 0));
      return leader !== undefined && follower !== undefined;
    }, 'a leader and a follower');
    const producer = kafka.producer();
    await producer.connect();
    for (let i = 0; i < 3; i++) {
      const [sent] = await producer.send({ topic: 'replicated', acks: -1, timeout: 10_000, messages: [{ value: `replicated-${i}` }] });
      expect(sent?.errorCode).toBe(0);
    }
    await producer.disconnect();
    const followerId = brokers.indexOf(follower!) + 1;
    expect(leader!.context.engine.inSyncReplicaEnd('replicated', 0, `broker-${followerId}`)).toBe(3);
    expect(authentications(leader!, mechanism)).toBeGreaterThan(0);
  });
}

test('connections.max.reauth.ms on the inter-broker listener: a follower whose session ended reconnects and authenticates again, and acks=all keeps completing', async () => {
  const store = new MemoryStore();
  const reauthMs = 700;
  const first = await startBroker(store, 1, 'PLAIN', 2, reauthMs);
  const second = await startBroker(store, 2, 'PLAIN', 2, reauthMs);
  const kafka = adminClient([first.portOf('CLIENT')!, second.portOf('CLIENT')!]);
  await createTopic(kafka, 'reauthenticated');
  await until(() => brokers.filter((broker) => broker.context.engine.serves('reauthenticated', 0)).length === 2, 'a leader and a follower');
  const leader = brokers.find((broker) => broker.context.engine.leads('reauthenticated', 0))!;
  const producer = kafka.producer();
  await producer.connect();
  const started = performance.now();
  let sent = 0;
  while (performance.now() - started < reauthMs * 4) {
    const [answer] = await producer.send({ topic: 'reauthenticated', acks: -1, timeout: 10_000, messages: [{ value: `r-${sent++}` }] });
    expect(answer?.errorCode).toBe(0);
    await Bun.sleep(50);
  }
  await producer.disconnect();
  expect(authentications(leader, 'PLAIN')).toBeGreaterThanOrEqual(2); // the follower logged in again after its session ended
});

describe('forged progress reports (a registered follower, broker 2, that never reports itself)', () => {
  let store: MemoryStore;
  let leader: Broker;
  let kafka: Kafka;
  let topics = 0;

  /** Broker 1 alone, with broker 2 registered (live lease, host 127.0.0.1) but silent: every acks=all waits for broker 2's report. */
  async function startLeader(): Promise<void> {
    store = new MemoryStore();
    await new ControlStore(store, '').put('brokers/2', { nodeId: 2, host: '127.0.0.1', port: 1, rack: null, stream: { writerId: 'broker-2', epoch: 0 }, leaseMs: 60_000, renewedAtMs: Date.now() });
    leader = await startBroker(store, 1, 'PLAIN', 2);
    kafka = adminClient([leader.portOf('CLIENT')!]);
  }

  /** A topic led by broker 1 with broker 2 as its follower, and an acks=all produce under way. */
  async function produceWaitingForBroker2(): Promise<{ topic: string; outcome: Promise<string> }> {
    const topic = `forged-${++topics}`;
    await createTopic(kafka, topic);
    await until(() => leader.context.engine.leads(topic, 0), 'broker 1 to lead the partition');
    const producer = kafka.producer({ retry: { retries: 0 } });
    await producer.connect();
    const outcome = producer
      .send({ topic, acks: -1, timeout: ACKS_TIMEOUT_MS, messages: [{ value: 'needs two replicas' }] })
      .then(
        () => 'acknowledged',
        (error: unknown) => String(error),
      )
      .finally(() => producer.disconnect());
    await until(() => leader.context.engine.logEndOffset(topic, 0) === 1, 'the record to be appended');
    return { topic, outcome };
  }

  /** Reports broker 2's progress at the leader's log end, as broker 2 would, for a while. */
  async function forge(topic: string, reporter: ProgressReporter): Promise<void> {
    for (let round = 0; round < 25; round++) {
      reporter.report(topic, 0, leader.context.engine.logEndOffset(topic, 0), leader.context.engine.leaderEpoch(topic, 0));
      await Bun.sleep(20);
    }
    reporter.close();
  }

  function reporterOn(listener: string, connector: InterBrokerConnector | undefined): ProgressReporter {
    const endpoints = ['CLIENT', 'INTERNAL', 'OPEN'].map((name) => ({ listener: name, host: '127.0.0.1', port: leader.portOf(name)! }));
    return new ProgressReporter(2, '127.0.0.1', leader.portOf(listener)!, { clock: systemClock, highWatermark: () => {}, endpoints, ...(connector === undefined ? {} : { connector }) });
  }

  const internalTls = () => ({ ca: readFileSync(certificates.caPath, 'utf8'), rejectUnauthorized: true });

  test("through the inter-broker listener with the brokers' credentials, the report counts: the control case", async () => {
    await startLeader();
    const { topic, outcome } = await produceWaitingForBroker2();
    await forge(topic, reporterOn('INTERNAL', { listener: 'INTERNAL', tls: internalTls(), sasl: () => new PlainSaslClient(BROKER_USER, BROKER_PASSWORD) }));
    expect(await outcome).toBe('acknowledged');
    expect(leader.context.engine.inSyncReplicaEnd(topic, 0, 'broker-2')).toBe(1);
  });

  const forgeries: [string, string, () => InterBrokerConnector | undefined][] = [
    ['an unauthenticated client on a PLAINTEXT listener', 'OPEN', () => undefined],
    ['a user who is not a broker, on the client listener', 'CLIENT', () => ({ listener: 'CLIENT', tls: null, sasl: () => new PlainSaslClient(MALLORY, MALLORY_PASSWORD) })],
    ['a super user who is not a broker, on the client listener', 'CLIENT', () => ({ listener: 'CLIENT', tls: null, sasl: () => new PlainSaslClient(ADMIN, ADMIN_PASSWORD) })],
    ['a user who is not a broker, on the inter-broker listener', 'INTERNAL', () => ({ listener: 'INTERNAL', tls: internalTls(), sasl: () => new PlainSaslClient(MALLORY, MALLORY_PASSWORD) })],
    [
      "a wrong password for the brokers' user, on the inter-broker listener",
      'INTERNAL',
      () => ({ listener: 'INTERNAL', tls: internalTls(), sasl: () => new ScramSaslClient(SCRAM_SHA_512, BROKER_USER, 'guessed') }),
    ],
    ['no SASL on the inter-broker listener', 'INTERNAL', () => ({ listener: 'INTERNAL', tls: internalTls(), sasl: null })],
  ];
  for (const [who, listener, connector] of forgeries) {
    test(`from ${who}: not counted, acks=all times out, broker 2 is not in sync`, async () => {
      await startLeader();
      const { topic, outcome } = await produceWaitingForBroker2();
      await forge(topic, reporterOn(listener, connector()));
      expect(await outcome).toMatch(/timed out|REQUEST_TIMED_OUT/i);
      expect(leader.context.engine.inSyncReplicaEnd(topic, 0, 'broker-2') ?? -1).toBeLessThan(1);
    });
  }
});
