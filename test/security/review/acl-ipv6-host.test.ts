// Adversarial review of issue 13, finding 3: an ACL's host is compared with the client's address
// as text, and Kafka's authorizers compare it with Java's InetAddress.getHostAddress(), which
// writes an IPv6 address in full (`0:0:0:0:0:0:0:1`), where Bun's sockets write it compressed
// (`::1`). An ACL for an IPv6 host written as Kafka matches it (by kafka-acls.sh, or carried over
// from a Kafka cluster by DescribeAcls and CreateAcls) never matched in Ferry: a DENY on such a
// host denied nothing, so an IPv6 client kept what Kafka would have taken from it. The same for
// max.connections.per.ip.overrides (Kafka reads them as addresses): an override written in the
// full form never applied, so a 0 meant to shut an address out let it in.
import { afterAll, beforeAll, expect, test } from 'bun:test';
import type { Broker } from '../../../src/broker/broker.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { AclOperation, AclPermissionType, PatternType, ResourceType } from '../../../src/security/acl/model.ts';
import { batchOf } from '../../support/batches.ts';
import { type SecureBroker, startSecureBroker, stopBrokers } from '../../broker/auth/brokers.ts';
import { answers, call, frames, nextId, wireClient } from '../../broker/auth/wire.ts';

const TOPIC = 'ipv6-acl';
const LISTENER = 'PLAINTEXT';
const running: Broker[] = [];
let secure: SecureBroker;

const allowAll = { principal: 'User:*', host: '*', operation: AclOperation.ALL, permissionType: AclPermissionType.ALLOW };
const topic = { resourceType: ResourceType.TOPIC, name: TOPIC, patternType: PatternType.LITERAL };

beforeAll(async () => {
  secure = await startSecureBroker({ listeners: [{ name: LISTENER, protocol: 'PLAINTEXT', host: '::1', port: 0 }], security: { authorizer: {} } }, running);
  await secure.broker.context.topology.createTopic(TOPIC, 1, 1, {});
});

afterAll(() => stopBrokers(running));

async function produceFromIpv6Loopback(): Promise<number> {
  const client = await wireClient(secure.port(LISTENER), undefined, '::1');
  try {
    const answer = await call(client, frames.produce(nextId(), TOPIC, batchOf('from ::1')));
    expect(answer).not.toBeNull();
    return answers.produce(answer!).body.responses[0].partitionResponses[0].errorCode;
  } finally {
    client.end();
  }
}

test("a DENY for an IPv6 host written as Kafka writes it (Java's full form) denies that host's client", async () => {
  const acls = secure.broker.context.security.acls!;
  await acls.create([{ pattern: topic, entry: allowAll }]);
  expect(await produceFromIpv6Loopback()).toBe(ErrorCode.NONE); // the control: allowed from anywhere

  const denyJavaForm = { principal: 'User:ANONYMOUS', host: '0:0:0:0:0:0:0:1', operation: AclOperation.WRITE, permissionType: AclPermissionType.DENY };
  const [created] = await acls.create([{ pattern: topic, entry: denyJavaForm }]);
  expect(created?.error).toBeNull();
  expect(await produceFromIpv6Loopback()).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
});

test('a DENY written compressed (::1) still denies it, as Ferry matched it before', async () => {
  const acls = secure.broker.context.security.acls!;
  await acls.delete([
    {
      pattern: { resourceType: ResourceType.ANY, name: null, patternType: PatternType.ANY },
      entry: { principal: null, host: null, operation: AclOperation.ANY, permissionType: AclPermissionType.ANY },
    },
  ]);
  await acls.create([
    { pattern: topic, entry: allowAll },
    { pattern: topic, entry: { principal: 'User:ANONYMOUS', host: '::1', operation: AclOperation.WRITE, permissionType: AclPermissionType.DENY } },
  ]);
  expect(await produceFromIpv6Loopback()).toBe(ErrorCode.TOPIC_AUTHORIZATION_FAILED);
});

test('max.connections.per.ip.overrides names an IPv6 client in either form: 0 for 0:0:0:0:0:0:0:1 refuses ::1', async () => {
  const limited = await startSecureBroker(
    { listeners: [{ name: LISTENER, protocol: 'PLAINTEXT', host: '::1', port: 0 }], security: { maxConnectionsPerIpOverrides: new Map([['0:0:0:0:0:0:0:1', 0]]) } },
    running,
  );
  const client = await wireClient(limited.port(LISTENER), undefined, '::1');
  try {
    client.send(frames.apiVersions(nextId()));
    expect(await client.waitClosed()).toBe(true);
    expect(client.frames).toHaveLength(0);
  } finally {
    client.end();
  }
});
