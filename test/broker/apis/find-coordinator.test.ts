import { describe, expect, test } from 'bun:test';
import { CoordinatorKeyType, findCoordinatorCodec } from '../../../src/broker/apis/find-coordinator.ts';
import { KafkaWriter } from '../../../src/protocol/writer.ts';
import { bytesOf, codecHarness, kafkajsEncode, kafkajsResponse } from '../../support/codec-harness.ts';

// kafkajs 2.2.4's own encoders and decoders (test/support/codec-harness.ts): the bytes a real client sends and the way it reads ours.
// kafkajs speaks v0-2, the rigid versions (flexible from v3); every version is also checked against
// Kafka's own grammar in test/protocol/schema-codecs.test.ts.
const VERSIONS = [0, 1, 2];

const { decodeRequest, encodeResponse, expectRejected, expectEveryTruncationRejected } = codecHarness(findCoordinatorCodec);

function kafkajsRequest(version: number, groupId: string, coordinatorType?: number): Promise<Uint8Array> {
  return kafkajsEncode('findCoordinator', version, { groupId, coordinatorType });
}

test('the advertised range is 0-6, flexible from 3', () => {
  const c = findCoordinatorCodec;
  expect([c.key, c.minVersion, c.maxVersion, c.flexibleFrom]).toEqual([10, 0, 6, 3]);
});

describe('FindCoordinator request from kafkajs', () => {
  for (const version of VERSIONS) {
    test(`v${version} group coordinator`, async () => {
      const bytes = await kafkajsRequest(version, 'my-group-ü');
      expect(decodeRequest(bytes, version)).toEqual({ key: 'my-group-ü', keyType: CoordinatorKeyType.GROUP, coordinatorKeys: [] });
    });
  }

  for (const version of [1, 2]) {
    test(`v${version} transaction coordinator`, async () => {
      const bytes = await kafkajsRequest(version, 'tx-1', CoordinatorKeyType.TRANSACTION);
      expect(decodeRequest(bytes, version)).toEqual({ key: 'tx-1', keyType: CoordinatorKeyType.TRANSACTION, coordinatorKeys: [] });
    });
  }
});

describe('FindCoordinator response read by kafkajs', () => {
  for (const version of VERSIONS) {
    test(`v${version} success`, async () => {
      const bytes = encodeResponse(version, { throttleTimeMs: 12, errorCode: 0, errorMessage: null, nodeId: 1, host: 'broker-1.local', port: 9092 });
      const decoded = await kafkajsResponse('findCoordinator', version).decode(bytes);
      expect(decoded.errorCode).toBe(0);
      expect(decoded.coordinator).toEqual({ nodeId: 1, host: 'broker-1.local', port: 9092 });
      if (version >= 1) {
        expect(decoded.clientSideThrottleTime ?? decoded.throttleTime).toBe(12);
        expect(decoded.errorMessage).toBeNull();
      }
    });

    test(`v${version} error`, async () => {
      const bytes = encodeResponse(version, { throttleTimeMs: 0, errorCode: 15, errorMessage: 'loading', nodeId: -1, host: '', port: -1 });
      const response = kafkajsResponse('findCoordinator', version);
      const decoded = await response.decode(bytes);
      expect(decoded.errorCode).toBe(15);
      expect(decoded.coordinator).toEqual({ nodeId: -1, host: '', port: -1 });
      if (version >= 1) expect(decoded.errorMessage).toBe('loading');
      await expect(response.parse(decoded)).rejects.toThrow(); // COORDINATOR_NOT_AVAILABLE reaches kafkajs as an error
    });
  }
});

describe('FindCoordinator request decoding is total', () => {
  for (const version of VERSIONS) {
    test(`v${version} truncated at every byte throws ProtocolError`, async () => {
      const bytes = await kafkajsRequest(version, 'some-consumer-group');
      expectEveryTruncationRejected(bytes, version);
    });

    test(`v${version} absurd lengths throw ProtocolError`, () => {
      expectRejected(bytesOf(new KafkaWriter().int16(0x7fff).raw(new Uint8Array(20))), version); // key past the end
      expectRejected(bytesOf(new KafkaWriter().int16(-1).int8(0)), version); // null key
      expectRejected(bytesOf(new KafkaWriter().int16(-2).int8(0)), version); // negative length
      expectRejected(
        bytesOf(
          new KafkaWriter()
            .int16(1)
            .raw(new Uint8Array([0xff]))
            .int8(0),
        ),
        version,
      ); // bad UTF-8
    });
  }
});
