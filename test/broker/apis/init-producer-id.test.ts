import { describe, expect, test } from 'bun:test';
import {
  initProducerIdCodec,
  type InitProducerIdRequest,
  type InitProducerIdResponse,
} from '../../../src/broker/apis/init-producer-id.ts';
import { ProtocolError } from '../../../src/broker/protocol/errors.ts';
import { KafkaReader } from '../../../src/broker/protocol/reader.ts';
import { KafkaWriter } from '../../../src/broker/protocol/writer.ts';
import { SeededRandom } from '../../../src/util/random.ts';

// kafkajs is CommonJS without types for its internals: require() gives `any`.
const kafkajsInitProducerId = require('kafkajs/src/protocol/requests/initProducerId/index.js');

const VERSIONS = [0, 1];
const RANDOM_CASES = 50;
const INT16_MAX = 0x7fff;

// ---- helpers ----

function decodeRequest(bytes: Uint8Array, version: number): InitProducerIdRequest {
  const reader = new KafkaReader(bytes);
  const request = initProducerIdCodec.decodeRequest(reader, version);
  expect(reader.remaining).toBe(0);
  return request;
}

function encodeResponse(version: number, response: InitProducerIdResponse): Buffer {
  const writer = new KafkaWriter();
  initProducerIdCodec.encodeResponse(writer, version, response);
  return Buffer.concat(writer.chunks());
}

function expectEveryTruncationToThrow(bytes: Uint8Array, version: number): void {
  for (let end = 0; end < bytes.length; end++) {
    expect(() => initProducerIdCodec.decodeRequest(new KafkaReader(bytes.subarray(0, end)), version)).toThrow(ProtocolError);
  }
}

// ---- test-only request encoder and response decoder (the other sides of the codec) ----

function encodeRequest(request: InitProducerIdRequest): Uint8Array {
  const writer = new KafkaWriter().nullableString(request.transactionalId).int32(request.transactionTimeoutMs);
  return Buffer.concat(writer.chunks());
}

function decodeResponse(bytes: Uint8Array): InitProducerIdResponse {
  const reader = new KafkaReader(bytes);
  const response = { throttleTimeMs: reader.int32(), errorCode: reader.int16(), producerId: reader.int64(), producerEpoch: reader.int16() };
  expect(reader.remaining).toBe(0);
  return response;
}

// ---- tests ----

describe('InitProducerId codec', () => {
  test('advertises key 22, versions 0-1, flexible from 2', () => {
    const codec = initProducerIdCodec;
    expect([codec.key, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([22, 0, 1, 2]);
  });

  for (const version of VERSIONS) {
    describe(`v${version}`, () => {
      test('decodes requests encoded by kafkajs', async () => {
        for (const transactionalId of [null, 'tx-orders', '']) {
          const { request } = kafkajsInitProducerId.protocol({ version })({ transactionalId, transactionTimeout: 60_000 });
          expect([request.apiKey, request.apiVersion]).toEqual([initProducerIdCodec.key, version]);
          const bytes: Buffer = (await request.encode()).buffer;
          expect(decodeRequest(bytes, version)).toEqual({ transactionalId, transactionTimeoutMs: 60_000 });
          expectEveryTruncationToThrow(bytes, version);
        }
      });

      test('encodes responses kafkajs decodes', async () => {
        const { response: kafkajsResponse } = kafkajsInitProducerId.protocol({ version })({});
        const response = { throttleTimeMs: 9, errorCode: 0, producerId: 2 ** 40 + 17, producerEpoch: 3 };
        const decoded = await kafkajsResponse.decode(encodeResponse(version, response));
        // kafkajs moves v1's throttle time to clientSideThrottleTime (KIP-219: the broker throttles after answering).
        const throttle = version >= 1 ? { throttleTime: 0, clientSideThrottleTime: 9 } : { throttleTime: 9 };
        expect(decoded).toEqual({ ...throttle, errorCode: 0, producerId: `${2 ** 40 + 17}`, producerEpoch: 3 });
      });

      test('round-trips random requests and responses; every truncation throws ProtocolError', () => {
        const random = new SeededRandom(1176 + version);
        for (let i = 0; i < RANDOM_CASES; i++) {
          const request = {
            transactionalId: random.next() < 0.3 ? null : `tx-${'é'.repeat(random.nextInt(5))}-${random.nextInt(1000)}`,
            transactionTimeoutMs: random.nextInt(900_000),
          };
          const bytes = encodeRequest(request);
          expect(decodeRequest(bytes, version)).toEqual(request);
          expectEveryTruncationToThrow(bytes, version);
          const response = {
            throttleTimeMs: random.nextInt(1000),
            errorCode: random.nextInt(3),
            producerId: random.next() < 0.2 ? -1 : random.nextInt(2 ** 50),
            producerEpoch: random.nextInt(INT16_MAX),
          };
          expect(decodeResponse(encodeResponse(version, response))).toEqual(response);
        }
      });

      test('rejects a transactional id that runs past the frame, or is not UTF-8, with ProtocolError', () => {
        const tooLong = new KafkaWriter().int16(INT16_MAX).raw(new Uint8Array(8));
        expect(() => initProducerIdCodec.decodeRequest(new KafkaReader(Buffer.concat(tooLong.chunks())), version)).toThrow(ProtocolError);
        const notUtf8 = new KafkaWriter().int16(2).raw(new Uint8Array([0xc3, 0x28])).int32(1000);
        expect(() => initProducerIdCodec.decodeRequest(new KafkaReader(Buffer.concat(notUtf8.chunks())), version)).toThrow(ProtocolError);
      });

      test('encodes the exact bytes of a response', () => {
        const bytes = encodeResponse(version, { throttleTimeMs: 1, errorCode: 47, producerId: -1, producerEpoch: -1 });
        expect([...bytes]).toEqual([0, 0, 0, 1, 0, 47, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
      });
    });
  }
});
