// Review of issue 12 (deliver 2): "A request for an API Ferry lacks gets Kafka's error, not a
// closed connection, wherever the protocol allows." A client's DescribeAcls (sarama
// ClusterAdmin.ListAcls, kafka-acls.sh, AdminClient.describeAcls) used to close the connection;
// Kafka without an authorizer answers the ACL APIs with SECURITY_DISABLED, and the connection lives
// (core/src/main/scala/kafka/server/AclApis.scala).
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createAclsCodec } from '../../src/broker/apis/create-acls.ts';
import { deleteAclsCodec } from '../../src/broker/apis/delete-acls.ts';
import { describeAclsCodec } from '../../src/broker/apis/describe-acls.ts';
import { Broker } from '../../src/broker/broker.ts';
import { KafkaReader } from '../../src/protocol/reader.ts';
import { KafkaWriter } from '../../src/protocol/writer.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { decodeBySchema, encodeBySchema, loadMessageSchema, type Message } from '../support/kafka-message-schema.ts';
import { type RawClient, rawClient } from '../support/raw-client.ts';

const DESCRIBE_ACLS = 29;
const API_VERSIONS = 18;
const SECURITY_DISABLED = 54;
/** The first request header with tagged fields (v2), used from each API's first flexible version. */
const FLEXIBLE_FROM = 2;
const WAIT_MS = 3_000;
const CLIENT_ID = 'review';
let directory: string;
let broker: Broker;

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'ferry-unserved-'));
  broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    engine: { directory, log: { flush: { kind: 'none' } }, wal: { store: new MemoryStore(), writerId: 'broker-1', config: { uploadIntervalMs: 2 } } },
  });
});

afterAll(async () => {
  await broker.stop();
  rmSync(directory, { recursive: true, force: true });
});

async function answers(client: RawClient, count: number): Promise<void> {
  const deadline = Date.now() + WAIT_MS;
  while (client.responses.length < count && !client.closed && Date.now() < deadline) await Bun.sleep(2);
}

/** `name`'s request at `version` written by Kafka's grammar, in a request header of its kind. */
function request(name: string, apiKey: number, version: number, correlationId: number, body: Message): Uint8Array {
  const header = new KafkaWriter().int16(apiKey).int16(version).int32(correlationId).nullableString(CLIENT_ID);
  if (version >= FLEXIBLE_FROM) header.emptyTaggedFields();
  return Buffer.concat([...header.chunks(), encodeBySchema(loadMessageSchema(`${name}Request`), version, body)]);
}

/** The response's body read by Kafka's grammar, after its header (tagged fields from the flexible versions). */
function responseBody(name: string, version: number, correlationId: number, bytes: Uint8Array): Message {
  const reader = new KafkaReader(bytes);
  expect(reader.int32()).toBe(correlationId);
  if (version >= FLEXIBLE_FROM) reader.skipTaggedFields();
  return decodeBySchema(loadMessageSchema(`${name}Response`), version, bytes.subarray(reader.position));
}

/** Sends one request, reads its answer, then checks the connection still answers ApiVersions. */
async function exchange(name: string, apiKey: number, version: number, body: Message): Promise<Message> {
  const client = await rawClient(broker.port);
  try {
    client.send(request(name, apiKey, version, 11, body));
    await answers(client, 1);
    expect({ answered: client.responses.length, closed: client.closed }).toEqual({ answered: 1, closed: false });
    client.send(request('ApiVersions', API_VERSIONS, 0, 12, {}));
    await answers(client, 2);
    expect({ answered: client.responses.length, closed: client.closed }).toEqual({ answered: 2, closed: false });
    return responseBody(name, version, 11, client.responses[0]!);
  } finally {
    client.end();
  }
}

const anyFilter = { resourceTypeFilter: 1, resourceNameFilter: null, patternTypeFilter: 1, principalFilter: null, hostFilter: null, operation: 1, permissionType: 1 };
const topicFilter = { resourceTypeFilter: 2, resourceNameFilter: 'orders', patternTypeFilter: 3, principalFilter: 'User:alice', hostFilter: '*', operation: 3, permissionType: 3 };
const creation = (principal: string) => ({ resourceType: 2, resourceName: 'orders', resourcePatternType: 3, principal, host: '*', operation: 3, permissionType: 3 });

// FINDING 7
test("DescribeAcls v1 (sarama 1.22's ListAcls) is answered with an error, the connection kept", async () => {
  const client = await rawClient(broker.port);
  // DescribeAclsRequest v1: resource type ANY(1), name null, pattern ANY(1), principal null, host null, operation ANY(1), permission ANY(1).
  const writer = new KafkaWriter().int16(DESCRIBE_ACLS).int16(1).int32(9).nullableString('review');
  writer.int8(1).nullableString(null).int8(1).nullableString(null).nullableString(null).int8(1).int8(1);
  client.send(Buffer.concat(writer.chunks()));
  const deadline = Date.now() + WAIT_MS;
  while (client.responses.length === 0 && !client.closed && Date.now() < deadline) await Bun.sleep(2);
  const closed = client.closed;
  client.end();
  expect({ answered: client.responses.length, closed }).toEqual({ answered: 1, closed: false });
});

for (const version of [describeAclsCodec.minVersion, describeAclsCodec.maxVersion]) {
  test(`DescribeAcls v${version}: SECURITY_DISABLED with Kafka's message and no resources, the connection kept`, async () => {
    const response = await exchange('DescribeAcls', describeAclsCodec.key, version, anyFilter);
    expect(response).toEqual({ throttleTimeMs: 0, errorCode: SECURITY_DISABLED, errorMessage: 'No Authorizer is configured on the broker', resources: [] });
  });
}

for (const version of [createAclsCodec.minVersion, createAclsCodec.maxVersion]) {
  test(`CreateAcls v${version}: one SECURITY_DISABLED result per creation, the connection kept`, async () => {
    const response = await exchange('CreateAcls', createAclsCodec.key, version, { creations: [creation('User:alice'), creation('User:bob')] });
    const refused = { errorCode: SECURITY_DISABLED, errorMessage: 'No Authorizer is configured.' };
    expect(response).toEqual({ throttleTimeMs: 0, results: [refused, refused] });
  });
}

for (const version of [deleteAclsCodec.minVersion, deleteAclsCodec.maxVersion]) {
  test(`DeleteAcls v${version}: one SECURITY_DISABLED filter result per filter, none matching, the connection kept`, async () => {
    const response = await exchange('DeleteAcls', deleteAclsCodec.key, version, { filters: [anyFilter, topicFilter, anyFilter] });
    const refused = { errorCode: SECURITY_DISABLED, errorMessage: 'No Authorizer is configured.', matchingAcls: [] };
    expect(response).toEqual({ throttleTimeMs: 0, filterResults: [refused, refused, refused] });
  });
}

test("the ACL APIs are served from v0 (sarama 1.22.1's ClusterAdmin sends v0) to v3 (Kafka 4.1's highest)", () => {
  const ranges = [describeAclsCodec, createAclsCodec, deleteAclsCodec].map((codec) => [codec.name, codec.minVersion, codec.maxVersion]);
  expect(ranges).toEqual([
    ['DescribeAcls', 0, 3],
    ['CreateAcls', 0, 3],
    ['DeleteAcls', 0, 3],
  ]);
});
