// Kafka's ACLs through real clients: a `ferry broker` with a SASL_SSL listener,
// authorizer.class.name=StandardAuthorizer and super.users=User:admin. The admin (kafkajs) creates
// the topics and gives alice WRITE and READ on topic `orders` and READ on group `order-readers`
// (CreateAcls); then kcat and kafkajs as alice produce and consume there, and are refused what
// Kafka refuses: another topic (TOPIC_AUTHORIZATION_FAILED), creating a topic, another group
// (GROUP_AUTHORIZATION_FAILED); bob, with no ACL, sees no topic in Metadata.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { AclOperationTypes, AclPermissionTypes, AclResourceTypes, ResourcePatternTypes, type Kafka } from 'kafkajs';
import { makeCertificates, type TestCertificates } from '../../support/certificates.ts';
import { SecureBroker } from '../../support/secure-broker.ts';
import { describeClient, missingCommand } from '../support/tools.ts';
import { AuthMatrix } from './support/auth-matrix.ts';
import { kafkajsClient, kafkajsConsume, kafkajsError, kafkajsMetadata, kafkajsProduce, kafkajsProduceRefused } from './support/kafkajs-clients.ts';
import { kcat, kcatClientError, kcatConsume, kcatProduce, kcatProduceRefused, kcatRefusal, kcatSasl, KCAT_METADATA_TIMEOUT_S } from './support/kcat.ts';
import { refusalTest } from './support/refusals.ts';

setDefaultTimeout(30_000);

const PASSWORDS = { admin: 'admin-secret', alice: 'alice-secret', bob: 'bob-secret' } as const;
type User = keyof typeof PASSWORDS;
/** alice may write and read it. */
const TOPIC = 'orders';
/** alice has no ACL on it. */
const OTHER_TOPIC = 'payroll';
/** alice may read (join, commit) in it. */
const GROUP = 'order-readers';
const OTHER_GROUP = 'payroll-readers';
const ADMIN_LINES = ['payroll written by admin'];
/** How long CreateAcls may take to reach the broker's authorizer (control records, refreshed every second). */
const ACL_PROPAGATION_MS = 10_000;
const ACL_POLL_MS = 200;
/** A kcat group consumer refused its group is stopped after this (it keeps retrying, as librdkafka does). */
const REFUSED_GROUP_CONSUMER_MS = 6_000;

/** kafkajs' words for TOPIC_AUTHORIZATION_FAILED on Produce (non-retriable: its type is lost in the wrapper). */
const NOT_AUTHORIZED_TOPICS = /Not authorized to access topics: \[Topic authorization failed\]/;
const NOT_AUTHORIZED_TOPICS_TEXT = 'KafkaJSNonRetriableError: Not authorized to access topics: [Topic authorization failed]';

const matrix = new AuthMatrix('ACLs (StandardAuthorizer, super.users=User:admin)');
let directory: string;
let certificates: TestCertificates;
let broker: SecureBroker;
let bootstrap: string;
const aliceWrote: string[] = [];

const kcatAs = (user: User) => kcatSasl(certificates, 'PLAIN', user, PASSWORDS[user]);
const kafkajsAs = (user: User, retries?: number): Kafka =>
  kafkajsClient(
    bootstrap,
    { tls: { certificates }, sasl: { mechanism: 'plain', username: user, password: PASSWORDS[user] } },
    { clientId: `acl-${user}`, ...(retries === undefined ? {} : { retries }) },
  );

describeClient('kcat', missingCommand('kcat', 'kcat'))('ACLs through kcat and kafkajs', () => {
  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'ferry-acl-certs-'));
    certificates = makeCertificates(directory, []);
    const users = Object.entries(PASSWORDS)
      .map(([user, password]) => `user_${user}="${password}"`)
      .join(' ');
    broker = await SecureBroker.start({
      label: 'acl',
      listeners: [{ name: 'SASL_SSL', protocol: 'SASL_SSL' }],
      properties: {
        'inter.broker.listener.name': 'SASL_SSL',
        'sasl.mechanism.inter.broker.protocol': 'PLAIN',
        'ssl.keystore.type': 'PEM',
        'ssl.keystore.location': certificates.serverPemPath,
        'listener.name.sasl_ssl.sasl.enabled.mechanisms': 'PLAIN',
        'listener.name.sasl_ssl.plain.sasl.jaas.config': `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="${PASSWORDS.admin}" ${users};`,
        'authorizer.class.name': 'org.apache.kafka.metadata.authorizer.StandardAuthorizer',
        'super.users': 'User:admin',
      },
    });
    bootstrap = broker.bootstrap('SASL_SSL');
    await grantAlice();
  });

  afterAll(async () => {
    console.log(matrix.summary());
    await broker?.stop();
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  });

  describe('alice, with WRITE and READ on the topic and READ on the group', () => {
    test('kcat: produces with acks=all and consumes back in her group', async () => {
      const lines = ['kcat order 1', 'kcat order 2'];
      const produced = await kcatProduce(bootstrap, kcatAs('alice'), TOPIC, lines);
      expect(produced.stderr).not.toContain('ERROR');
      expect(produced.exitCode).toBe(0);
      aliceWrote.push(...lines);
      const consumed = await kcat(bootstrap, [...kcatAs('alice'), 'auto.offset.reset=earliest'], ['-G', GROUP, TOPIC, '-e', '-q', '-f', '%s\\n']);
      expect(consumed.stdout.split('\n').filter((line) => line !== '')).toEqual(lines);
    });

    test('kafkajs: produces with acks=all and consumes back in her group; metadata shows her topic', async () => {
      const kafka = kafkajsAs('alice');
      const values = ['kafkajs order 1'];
      await kafkajsProduce(kafka, TOPIC, values);
      aliceWrote.push(...values);
      // kcat's member committed the first lines in this group: kafkajs resumes after them.
      expect(await kafkajsConsume(kafka, TOPIC, GROUP, values.length)).toEqual(values);
      expect((await kafkajsMetadata(kafka)).topics).toEqual([TOPIC]);
    });
  });

  describe('what alice is refused', () => {
    refusalTest(matrix, {
      client: 'kcat',
      scenario: 'alice produces to a topic she has no ACL for',
      expected: /Broker: Topic authorization failed/,
      expectedText: 'Broker: Topic authorization failed',
      attempt: async () => {
        const result = await kcatProduceRefused(bootstrap, kcatAs('alice'), OTHER_TOPIC, 'intruder: alice');
        return { refused: result.exitCode !== 0, observed: kcatClientError(result.stderr) };
      },
    });
    refusalTest(matrix, {
      client: 'kafkajs',
      scenario: 'alice produces to a topic she has no ACL for',
      expected: NOT_AUTHORIZED_TOPICS,
      expectedText: NOT_AUTHORIZED_TOPICS_TEXT,
      attempt: async () => {
        const observed = await kafkajsProduceRefused(kafkajsAs('alice', 0), OTHER_TOPIC, 'intruder: kafkajs alice');
        return { refused: observed !== 'written', observed };
      },
    });
    refusalTest(matrix, {
      client: 'kcat',
      scenario: 'alice reads a topic she has no ACL for',
      expected: /Broker: Topic authorization failed/,
      expectedText: 'Broker: Topic authorization failed',
      attempt: async () => {
        const result = await kcat(bootstrap, kcatAs('alice'), ['-C', '-t', OTHER_TOPIC, '-p', '0', '-o', 'beginning', '-e', '-f', '%s\\n']);
        return { refused: !result.stdout.includes(ADMIN_LINES[0]!), observed: kcatClientError(result.stderr) };
      },
    });
    refusalTest(matrix, {
      client: 'kafkajs',
      scenario: 'alice creates a topic (no CREATE on the cluster or the topic)',
      expected: /TOPIC_AUTHORIZATION_FAILED|Topic authorization failed/,
      expectedText: 'CreateTopics: TOPIC_AUTHORIZATION_FAILED',
      attempt: async () => {
        const admin = kafkajsAs('alice', 0).admin();
        try {
          await admin.connect();
          const created = await admin.createTopics({ topics: [{ topic: 'alice-made' }] });
          return { refused: !created, observed: `created: ${created}` };
        } catch (error) {
          return { refused: true, observed: kafkajsErrorWithCauses(error) };
        } finally {
          await admin.disconnect();
        }
      },
    });
    refusalTest(matrix, {
      client: 'kcat',
      scenario: 'alice auto-creates a topic by producing to it (no CREATE)',
      expected: /Broker: Topic authorization failed/,
      expectedText: 'Broker: Topic authorization failed',
      attempt: async () => {
        const result = await kcatProduceRefused(bootstrap, kcatAs('alice'), 'alice-auto-made', 'intruder: alice auto-create');
        return { refused: result.exitCode !== 0, observed: kcatClientError(result.stderr) };
      },
    });
    refusalTest(matrix, {
      client: 'kcat',
      scenario: 'alice consumes in a group she has no ACL for',
      expected: /FindCoordinator response error: Group authorization failed/,
      expectedText: 'Consumer error: FindCoordinator response error: Group authorization failed.',
      attempt: async () => {
        const result = await kcat(bootstrap, kcatAs('alice'), ['-G', OTHER_GROUP, TOPIC, '-e', '-q', '-f', '%s\\n'], { timeoutMs: REFUSED_GROUP_CONSUMER_MS });
        return { refused: result.stdout.trim() === '', observed: kcatClientError(result.stderr) };
      },
    });
    refusalTest(matrix, {
      client: 'kafkajs',
      scenario: 'alice consumes in a group she has no ACL for',
      expected: /KafkaJSGroupCoordinatorNotFound: Failed to find group coordinator/,
      expectedText: "KafkaJSGroupCoordinatorNotFound: Failed to find group coordinator (kafkajs drops FindCoordinator's GROUP_AUTHORIZATION_FAILED)",
      attempt: async () => {
        try {
          const values = await kafkajsConsume(kafkajsAs('alice', 0), TOPIC, OTHER_GROUP, 1);
          return { refused: values.length === 0, observed: `consumed ${JSON.stringify(values)}` };
        } catch (error) {
          return { refused: true, observed: kafkajsError(error) };
        }
      },
    });

    test('nothing was created: the admin sees only the topics it made', async () => {
      expect((await kafkajsMetadata(kafkajsAs('admin'))).topics).toEqual([TOPIC, OTHER_TOPIC].sort());
    });
  });

  describe('bob, with no ACL', () => {
    refusalTest(matrix, {
      client: 'kcat',
      scenario: 'bob (no ACL) lists topics: Metadata shows none',
      expected: /^0 topics$/,
      expectedText: '0 topics',
      attempt: async () => {
        const result = await kcat(bootstrap, kcatAs('bob'), ['-L', '-m', String(KCAT_METADATA_TIMEOUT_S)]);
        const count = /^ (\d+) topics:/m.exec(result.stdout)?.[1];
        return { refused: count === '0', observed: count === undefined ? kcatRefusal(result.stderr) : `${count} topics` };
      },
    });
    refusalTest(matrix, {
      client: 'kafkajs',
      scenario: 'bob (no ACL) lists topics: Metadata shows none',
      expected: /^\[\]$/,
      expectedText: '[]',
      attempt: async () => {
        const topics = (await kafkajsMetadata(kafkajsAs('bob'))).topics;
        return { refused: topics.length === 0, observed: JSON.stringify(topics) };
      },
    });
    refusalTest(matrix, {
      client: 'kafkajs',
      scenario: "bob produces to alice's topic",
      expected: NOT_AUTHORIZED_TOPICS,
      expectedText: NOT_AUTHORIZED_TOPICS_TEXT,
      attempt: async () => {
        const observed = await kafkajsProduceRefused(kafkajsAs('bob', 0), TOPIC, 'intruder: bob');
        return { refused: observed !== 'written', observed };
      },
    });
  });

  describe('the data', () => {
    test("the admin (a super user) reads alice's topic: only what alice wrote", async () => {
      expect(await kcatConsume(bootstrap, kcatAs('admin'), TOPIC)).toEqual(aliceWrote);
    });

    test('the admin reads the other topic: only what the admin wrote', async () => {
      expect(await kcatConsume(bootstrap, kcatAs('admin'), OTHER_TOPIC)).toEqual(ADMIN_LINES);
    });
  });
});

/** The admin makes both topics, writes the other one, and gives alice her ACLs; resolves once alice's Metadata shows her topic. */
async function grantAlice(): Promise<void> {
  const admin = kafkajsAs('admin').admin();
  await admin.connect();
  try {
    await admin.createTopics({ topics: [{ topic: TOPIC }, { topic: OTHER_TOPIC }], waitForLeaders: true });
    const allow = (resourceType: AclResourceTypes, resourceName: string, operation: AclOperationTypes) => ({
      resourceType,
      resourceName,
      resourcePatternType: ResourcePatternTypes.LITERAL,
      principal: 'User:alice',
      host: '*',
      operation,
      permissionType: AclPermissionTypes.ALLOW,
    });
    await admin.createAcls({
      acl: [allow(AclResourceTypes.TOPIC, TOPIC, AclOperationTypes.WRITE), allow(AclResourceTypes.TOPIC, TOPIC, AclOperationTypes.READ), allow(AclResourceTypes.GROUP, GROUP, AclOperationTypes.READ)],
    });
  } finally {
    await admin.disconnect();
  }
  expect((await kcatProduce(bootstrap, kcatAs('admin'), OTHER_TOPIC, ADMIN_LINES)).exitCode).toBe(0);
  const alice = kafkajsAs('alice');
  const deadline = performance.now() + ACL_PROPAGATION_MS;
  for (let seen = (await kafkajsMetadata(alice)).topics; !seen.includes(TOPIC); seen = (await kafkajsMetadata(alice)).topics) {
    if (performance.now() > deadline) throw new Error(`alice's ACLs did not reach the authorizer in ${ACL_PROPAGATION_MS} ms: she sees ${JSON.stringify(seen)}`);
    await Bun.sleep(ACL_POLL_MS);
  }
}

/** kafkajs' error with what it aggregates (createTopics wraps each topic's error). */
function kafkajsErrorWithCauses(error: unknown): string {
  const errors = (error as { errors?: unknown[] }).errors;
  const causes = Array.isArray(errors) ? `: ${errors.map(kafkajsError).join('; ')}` : '';
  return `${kafkajsError(error)}${causes}`;
}
