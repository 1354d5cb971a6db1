import { describe, expect, test } from 'bun:test';
import {
  initProducerIdCodec,
  type InitProducerIdRequest,
  type InitProducerIdResponse,
} from '../../../src/broker/apis/init-producer-id.ts';
import { KafkaReader } from '../../../src/broker/protocol/reader.ts';
import { KafkaWriter } from '../../../src/broker/protocol/writer.ts';
import { SeededRandom } from '../../../src/util/random.ts';
import { bytesOf, codecHarness, kafkajsBytes, kafkajsProtocol } from '../../support/codec-harness.ts';

const VERSIONS = [0, 1];
const RANDOM_CASES = 50;
const INT16_MAX = 0x7fff;

// ---- helpers (test/support/codec-harness.ts) ----

const { decodeRequest, encodeResponse, expectRejected, expectEveryTruncationRejected } = codecHarness(initProducerIdCodec);

// ---- test-only request encoder and response decoder (the other sides of the codec) ----

function encodeRequest(request: InitProducerIdRequest): Uint8Array {
  return bytesOf(new KafkaWriter().nullableString(request.transactionalId).int32(request.transactionTimeoutMs));
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
          const { request } = kafkajsProtocol('initProducerId', version, { transactionalId, transactionTimeout: 60_000 });
          expect([request.apiKey, request.apiVersion]).toEqual([initProducerIdCodec.key, version]);
          const bytes = await kafkajsBytes(request);
          expect(decodeRequest(bytes, version)).toEqual({ transactionalId, transactionTimeoutMs: 60_000 });
          expectEveryTruncationRejected(bytes, version);
        }
      });

      test('encodes responses kafkajs decodes', async () => {
        const { response: kafkajsResponse } = kafkajsProtocol('initProducerId', version, {});
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
          expectEveryTruncationRejected(bytes, version);
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
        expectRejected(bytesOf(new KafkaWriter().int16(INT16_MAX).raw(new Uint8Array(8))), version); // runs past the frame
        expectRejected(bytesOf(new KafkaWriter().int16(2).raw(new Uint8Array([0xc3, 0x28])).int32(1000)), version); // not UTF-8
      });

      test('encodes the exact bytes of a response', () => {
        const bytes = encodeResponse(version, { throttleTimeMs: 1, errorCode: 47, producerId: -1, producerEpoch: -1 });
        expect([...bytes]).toEqual([0, 0, 0, 1, 0, 47, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
      });
    });
  }
});
