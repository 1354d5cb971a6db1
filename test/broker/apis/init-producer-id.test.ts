import { describe, expect, test } from 'bun:test';
import { initProducerIdCodec } from '../../../src/broker/apis/init-producer-id.ts';
import { KafkaWriter } from '../../../src/protocol/writer.ts';
import { bytesOf, codecHarness, kafkajsBytes, kafkajsProtocol } from '../../support/codec-harness.ts';

// kafkajs speaks v0-1, the rigid versions (flexible from v2); every version is also checked against
// Kafka's own grammar in test/protocol/schema-codecs.test.ts.
const VERSIONS = [0, 1];
const INT16_MAX = 0x7fff;

// ---- helpers (test/support/codec-harness.ts) ----

const { decodeRequest, encodeResponse, expectRejected, expectEveryTruncationRejected } = codecHarness(initProducerIdCodec);

// ---- tests ----

describe('InitProducerId codec', () => {
  test('advertises key 22, versions 0-4, flexible from 2', () => {
    const codec = initProducerIdCodec;
    expect([codec.key, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([22, 0, 4, 2]);
  });

  for (const version of VERSIONS) {
    describe(`v${version}`, () => {
      test('decodes requests encoded by kafkajs', async () => {
        for (const transactionalId of [null, 'tx-orders', '']) {
          const { request } = kafkajsProtocol('initProducerId', version, { transactionalId, transactionTimeout: 60_000 });
          expect([request.apiKey, request.apiVersion]).toEqual([initProducerIdCodec.key, version]);
          const bytes = await kafkajsBytes(request);
          // producer_id and producer_epoch (v3+, KIP-360) take their defaults: a new producer.
          expect(decodeRequest(bytes, version)).toEqual({ transactionalId, transactionTimeoutMs: 60_000, producerId: -1, producerEpoch: -1 });
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

      test('rejects a transactional id that runs past the frame, or is not UTF-8, with ProtocolError', () => {
        expectRejected(bytesOf(new KafkaWriter().int16(INT16_MAX).raw(new Uint8Array(8))), version); // runs past the frame
        expectRejected(
          bytesOf(
            new KafkaWriter()
              .int16(2)
              .raw(new Uint8Array([0xc3, 0x28]))
              .int32(1000),
          ),
          version,
        ); // not UTF-8
      });

      test('encodes the exact bytes of a response', () => {
        const bytes = encodeResponse(version, { throttleTimeMs: 1, errorCode: 47, producerId: -1, producerEpoch: -1 });
        expect([...bytes]).toEqual([0, 0, 0, 1, 0, 47, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]);
      });
    });
  }
});
