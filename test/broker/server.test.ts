import { type RawClient, rawClient } from '../support/raw-client.ts';
import { afterEach, describe, expect, test } from 'bun:test';
import { apiVersionsCodec } from '../../src/broker/apis/api-versions.ts';
import { ErrorCode } from '../../src/protocol/error-codes.ts';
import { KafkaReader } from '../../src/protocol/reader.ts';
import { KafkaWriter } from '../../src/protocol/writer.ts';
import { Router } from '../../src/broker/router.ts';
import { KafkaServer } from '../../src/broker/server.ts';

const servers: KafkaServer[] = [];
afterEach(() => {
  for (const server of servers.splice(0)) server.stop();
});

function start(options: { maxConnections?: number; log?: (message: string) => void } = {}): KafkaServer {
  const router = new Router([{ codec: apiVersionsCodec, handle: () => ({ errorCode: 0, apiKeys: router.apiVersions(), throttleTimeMs: 0 }) }]);
  const server = KafkaServer.listen({ hostname: '127.0.0.1', port: 0, router, log: () => {}, ...options });
  servers.push(server);
  return server;
}

function apiVersionsRequest(version: number, correlationId: number): Uint8Array {
  const writer = new KafkaWriter().int16(18).int16(version).int32(correlationId).nullableString('test-client');
  if (version >= 3) writer.emptyTaggedFields().compactString('ferry-test').compactString('1.0').emptyTaggedFields();
  const chunks = writer.chunks();
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

async function until(condition: () => boolean): Promise<void> {
  for (let i = 0; i < 500 && !condition(); i++) await Bun.sleep(2);
  expect(condition()).toBe(true);
}

describe('Kafka protocol server', () => {
  test('answers ApiVersions v0-v3 in request order, with response header v0', async () => {
    const server = start();
    const client = await rawClient(server.port);
    for (let version = 0; version <= 3; version++) client.send(apiVersionsRequest(version, 100 + version));
    await until(() => client.responses.length === 4);
    client.responses.forEach((response, version) => {
      const reader = new KafkaReader(response);
      expect(reader.int32()).toBe(100 + version);
      expect(reader.int16()).toBe(ErrorCode.NONE);
      const count = version >= 3 ? reader.uvarint() - 1 : reader.int32();
      expect(count).toBe(1);
      expect([reader.int16(), reader.int16(), reader.int16()]).toEqual([18, 0, 3]);
    });
    client.end();
  });

  test('ApiVersions of an unknown version gets UNSUPPORTED_VERSION in the v0 format', async () => {
    const server = start();
    const client = await rawClient(server.port);
    client.send(new KafkaWriter().int16(18).int16(99).int32(7).nullableString(null).chunks()[0]!);
    await until(() => client.responses.length === 1);
    const reader = new KafkaReader(client.responses[0]!);
    expect(reader.int32()).toBe(7);
    expect(reader.int16()).toBe(ErrorCode.UNSUPPORTED_VERSION);
    expect(reader.int32()).toBe(1);
    client.end();
  });

  test('a frame split across many writes is reassembled; two frames in one write are both answered', async () => {
    const server = start();
    const client = await rawClient(server.port);
    const frame = apiVersionsRequest(2, 1);
    const prefixed = new Uint8Array(4 + frame.length);
    new DataView(prefixed.buffer).setInt32(0, frame.length);
    prefixed.set(frame, 4);
    for (const byte of prefixed) {
      client.sendRaw(Uint8Array.of(byte));
      await Bun.sleep(0);
    }
    client.sendRaw(Buffer.concat([prefixed, prefixed]));
    await until(() => client.responses.length === 3);
    client.end();
  });

  for (const [name, bytes] of [
    ['an oversize frame', Uint8Array.of(0x7f, 0xff, 0xff, 0xff)],
    ['a negative size', Uint8Array.of(0xff, 0xff, 0xff, 0xfe)],
    ['an unknown API key', Uint8Array.of(0, 0, 0, 8, 0x7f, 0x00, 0, 0, 0, 0, 0, 1)],
    ['a truncated header', Uint8Array.of(0, 0, 0, 3, 0, 18, 0)],
  ] as const) {
    test(`${name} closes that connection; the broker keeps serving others`, async () => {
      const server = start();
      const bad = await rawClient(server.port);
      bad.sendRaw(bytes);
      await until(() => bad.closed);
      const good = await rawClient(server.port);
      good.send(apiVersionsRequest(1, 5));
      await until(() => good.responses.length === 1);
      good.end();
    });
  }
});

describe('one client cannot stall the others', () => {
  test('a client stuck mid-frame and a client that never reads its responses do not delay a third', async () => {
    const server = start();
    const stuck = await rawClient(server.port);
    stuck.sendRaw(Uint8Array.of(0, 0, 0, 100, 0, 18)); // promises 100 bytes, sends 2
    const hog = await rawClient(server.port);
    for (let i = 0; i < 2000; i++) hog.send(apiVersionsRequest(3, i)); // floods; reads slowly (Bun buffers them)
    const good = await rawClient(server.port);
    good.send(apiVersionsRequest(3, 42));
    await until(() => good.responses.length === 1); // bounded wait: the answer comes without the others finishing
    expect(new KafkaReader(good.responses[0]!).int32()).toBe(42);
    for (const client of [stuck, hog, good]) client.end();
  });
});

describe('max.connections', () => {
  test('5,000 connections beyond the cap are closed on arrival; those within it are served', async () => {
    const cap = 20;
    const beyond = 5000;
    const logged: string[] = [];
    const server = start({ maxConnections: cap, log: (message) => logged.push(message) });
    const kept: RawClient[] = [];
    for (let i = 0; i < cap; i++) kept.push(await rawClient(server.port));
    await until(() => server.connectionCount === cap);
    const extra: RawClient[] = [];
    const batch = 250; // connects in batches: a few hundred handshakes in flight at once
    for (let at = 0; at < beyond; at += batch) {
      extra.push(...(await Promise.all(Array.from({ length: batch }, () => rawClient(server.port)))));
      expect(server.connectionCount).toBeLessThanOrEqual(cap);
    }
    await until(() => extra.every((client) => client.closed));
    expect(server.refusedConnectionCount).toBe(beyond);
    expect(logged).toEqual([`max.connections (${cap}) reached: closing new connections until some end`]); // said once, not 5,000 times
    expect(server.connectionCount).toBe(cap);
    kept[0]!.send(apiVersionsRequest(3, 7)); // the ones within the cap still work
    await until(() => kept[0]!.responses.length === 1);
    kept[1]!.end(); // and a place freed is taken by the next arrival
    await until(() => server.connectionCount === cap - 1);
    const next = await rawClient(server.port);
    next.send(apiVersionsRequest(3, 8));
    await until(() => next.responses.length === 1);
    for (const client of [...kept, next]) client.end();
  }, 120_000);
});
