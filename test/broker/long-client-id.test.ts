// Review of issue 12 (a response never carries a STRING past 32767 bytes; the writer asserts):
// JoinGroup's member id is made from the request's client id, which may itself be a whole STRING
// (the request header's nullable string). Such a member id is past the limit, so the writer's
// assert throws and the broker closes the connection where it answered before.
import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker } from '../../src/broker/broker.ts';
import { encodeMessage } from '../../src/protocol/message-codec.ts';
import { joinGroupRequestSchema } from '../../src/protocol/messages/join-group.ts';
import { STRING_BYTES_MAX } from '../../src/protocol/reader.ts';
import { KafkaWriter } from '../../src/protocol/writer.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { rawClient, request } from '../support/raw-client.ts';
import { describeGroupsRequestSchema } from '../../src/protocol/messages/describe-groups.ts';

const JOIN_GROUP_VERSION = 5; // non-flexible: header v1, member id required from v4 (KIP-394)
const ANSWER_WAIT_MS = 10_000;
let directory: string;
let broker: Broker;

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'ferry-long-client-id-'));
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

test('JoinGroup from a client whose id is the longest STRING is answered, the connection kept', async () => {
  const client = await rawClient(broker.port);
  const clientId = 'c'.repeat(STRING_BYTES_MAX); // legal: a header's client id is a STRING
  const writer = new KafkaWriter().int16(joinGroupRequestSchema.apiKey).int16(JOIN_GROUP_VERSION).int32(1).nullableString(clientId);
  encodeMessage(joinGroupRequestSchema, writer, JOIN_GROUP_VERSION, {
    groupId: 'g',
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 10_000,
    memberId: '',
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: new Uint8Array(0) }],
  });
  client.send(Buffer.concat(writer.chunks()));
  const deadline = Date.now() + ANSWER_WAIT_MS;
  while (client.responses.length === 0 && !client.closed && Date.now() < deadline) await Bun.sleep(2);
  const closed = client.closed;
  client.end();
  expect(closed).toBe(false);
  expect(client.responses.length).toBe(1);
});

// FINDING 4 (the member it left behind)
test('after such a JoinGroup, DescribeGroups of the group from another client is answered, the connection kept', async () => {
  const joiner = await rawClient(broker.port);
  const clientId = 'd'.repeat(STRING_BYTES_MAX);
  const writer = new KafkaWriter().int16(joinGroupRequestSchema.apiKey).int16(JOIN_GROUP_VERSION).int32(1).nullableString(clientId);
  encodeMessage(joinGroupRequestSchema, writer, JOIN_GROUP_VERSION, {
    groupId: 'g2',
    sessionTimeoutMs: 10_000,
    rebalanceTimeoutMs: 10_000,
    memberId: '',
    groupInstanceId: null,
    protocolType: 'consumer',
    protocols: [{ name: 'range', metadata: new Uint8Array(0) }],
  });
  joiner.send(Buffer.concat(writer.chunks()));
  await Bun.sleep(300);
  joiner.end();
  const admin = await rawClient(broker.port);
  const answer = await request(admin, describeGroupsRequestSchema, 0, { groups: ['g2'] }, false);
  admin.end();
  expect(answer).not.toBeNull();
});
