import { expect, test } from 'bun:test';
import { isFlexible } from '../../../src/broker/apis/api.ts';
import { saslHandshakeCodec as codec } from '../../../src/broker/apis/sasl-handshake.ts';
import { codecHarness, kafkajsEncode, kafkajsResponse } from '../../support/codec-harness.ts';

// kafkajs 2.2.4 speaks both versions; both are also checked against Kafka's own grammar in
// test/protocol/schema-codecs.test.ts.
const VERSIONS = [0, 1];

const { decodeRequest, encodeResponse, expectEveryTruncationRejected } = codecHarness(codec);

test('advertises versions 0-1, never flexible: request header v1 and response header v0 in both', () => {
  expect([codec.key, codec.name, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([17, 'SaslHandshake', 0, 1, null]);
  for (const version of VERSIONS) expect(isFlexible(codec, version)).toBe(false);
});

test('v0 and v1 requests are the same bytes, and decode to the mechanism kafkajs chose', async () => {
  const [v0, v1] = await Promise.all(VERSIONS.map((version) => kafkajsEncode('saslHandshake', version, { mechanism: 'SCRAM-SHA-256' })));
  expect(v1).toEqual(v0!);
  for (const [i, bytes] of [v0!, v1!].entries()) {
    expect(decodeRequest(bytes, i)).toEqual({ mechanism: 'SCRAM-SHA-256' });
    expectEveryTruncationRejected(bytes, i);
  }
});

test('kafkajs reads the enabled mechanisms of a response in both versions', async () => {
  for (const version of VERSIONS) {
    const bytes = encodeResponse(version, { errorCode: 0, mechanisms: ['PLAIN', 'SCRAM-SHA-512'] });
    expect(await kafkajsResponse('saslHandshake', version).decode(bytes)).toEqual({ errorCode: 0, enabledMechanisms: ['PLAIN', 'SCRAM-SHA-512'] });
  }
});
