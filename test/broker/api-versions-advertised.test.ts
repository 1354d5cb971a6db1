import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type ApiCodec, isFlexible } from '../../src/broker/apis/api.ts';
import { API_CODECS } from '../../src/broker/apis/index.ts';
import { Broker } from '../../src/broker/broker.ts';
import { decodeMessage, encodeMessage } from '../../src/protocol/message-codec.ts';
import { apiVersionsResponseSchema } from '../../src/protocol/messages/api-versions.ts';
import { MESSAGE_SCHEMAS } from '../../src/protocol/messages/index.ts';
import { KafkaReader } from '../../src/protocol/reader.ts';
import type { MessageSchema } from '../../src/protocol/schema.ts';
import { KafkaWriter } from '../../src/protocol/writer.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { type RawClient, rawClient } from '../support/raw-client.ts';

/**
 * ApiVersions advertises exactly what works: the APIs and versions it lists are those of the
 * codecs the broker serves, and each of them, at its lowest and highest version, answers a
 * request (one with every field at its default) with a response of that version, never a
 * closed connection. An API or version it does not list closes the connection, as in Kafka.
 */

const ANSWER_WAIT_MS = 5_000;
const CLIENT_ID = 'advertised';

let directory: string;
let broker: Broker;

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'ferry-advertised-'));
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

/** Fields a request needs for an answer: Produce with acks=0 is answered with nothing, as Kafka does. */
const ANSWERED: Record<string, Record<string, unknown>> = { Produce: { acks: -1 } };

/** Request header v1, or v2 (tagged fields) in a flexible version. */
function frame(apiKey: number, version: number, flexible: boolean, correlationId: number, body: (writer: KafkaWriter) => void): Uint8Array {
  const writer = new KafkaWriter().int16(apiKey).int16(version).int32(correlationId).nullableString(CLIENT_ID);
  if (flexible) writer.emptyTaggedFields();
  body(writer);
  return Buffer.concat(writer.chunks());
}

async function answer(client: RawClient, count: number): Promise<Uint8Array | null> {
  const deadline = Date.now() + ANSWER_WAIT_MS;
  while (client.responses.length < count && !client.closed && Date.now() < deadline) await Bun.sleep(5);
  return client.responses[count - 1] ?? null;
}

function schemasOf(codec: ApiCodec<unknown, unknown>): [MessageSchema, MessageSchema] {
  const all = MESSAGE_SCHEMAS;
  const request = all.find((schema) => schema.apiKey === codec.key && schema.name.endsWith('Request'))!;
  const response = all.find((schema) => schema.apiKey === codec.key && schema.name.endsWith('Response'))!;
  return [request, response];
}

test('ApiVersions lists exactly the served APIs and their versions', async () => {
  const client = await rawClient(broker.port);
  client.send(frame(18, 3, true, 1, (w) => w.compactString('test').compactString('1').emptyTaggedFields()));
  const bytes = await answer(client, 1);
  client.end();
  const reader = new KafkaReader(bytes!);
  expect(reader.int32()).toBe(1); // response header v0, even in v3
  const response = decodeMessage(apiVersionsResponseSchema, reader, 3);
  expect(response.errorCode).toBe(0);
  const advertised = (response.apiKeys as { apiKey: number; minVersion: number; maxVersion: number }[]).map((k) => [k.apiKey, k.minVersion, k.maxVersion]);
  expect(advertised).toEqual(API_CODECS.map((codec) => [codec.key, codec.minVersion, codec.maxVersion]).sort((a, b) => a[0]! - b[0]!));
});

for (const codec of API_CODECS) {
  test(`${codec.name} answers at its lowest and highest advertised versions (${codec.minVersion}, ${codec.maxVersion})`, async () => {
    const [requestSchema, responseSchema] = schemasOf(codec);
    const client = await rawClient(broker.port);
    const versions = [...new Set([codec.minVersion, codec.maxVersion])];
    for (const [i, version] of versions.entries()) {
      const flexible = isFlexible(codec, version);
      client.send(frame(codec.key, version, flexible, 100 + i, (w) => encodeMessage(requestSchema, w, version, ANSWERED[codec.name] ?? {})));
      const bytes = await answer(client, i + 1);
      expect(bytes).not.toBeNull();
      const reader = new KafkaReader(bytes!);
      expect(reader.int32()).toBe(100 + i);
      if (flexible && codec.key !== 18) reader.skipTaggedFields();
      decodeMessage(responseSchema, reader, version);
      expect(reader.remaining).toBe(0);
    }
    client.end();
  });
}

test('a version past the advertised range closes the connection, as Kafka does', async () => {
  const metadata = API_CODECS.find((codec) => codec.name === 'Metadata')!;
  const client = await rawClient(broker.port);
  client.send(frame(metadata.key, metadata.maxVersion + 1, true, 7, (w) => w.uvarint(0)));
  expect(await answer(client, 1)).toBeNull();
  expect(client.closed).toBe(true);
});
