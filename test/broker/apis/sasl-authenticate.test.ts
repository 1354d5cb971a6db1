import { expect, test } from 'bun:test';
import { isFlexible } from '../../../src/broker/apis/api.ts';
import { saslAuthenticateCodec as codec } from '../../../src/broker/apis/sasl-authenticate.ts';
import { codecHarness, grammarRequestBytes, kafkajsEncode, kafkajsResponse } from '../../support/codec-harness.ts';

// kafkajs 2.2.4 speaks v0-1; v2 (flexible) is written here by Kafka's own grammar. Every version is
// also checked against that grammar in test/protocol/schema-codecs.test.ts.

const { decodeRequest, encodeResponse, expectEveryTruncationRejected } = codecHarness(codec);

const TOKEN = new TextEncoder().encode('n,,n=alice,r=fyko+d2lbbFgONRv9qkxdawL');
/** BYTES: an int32 length, then the token (what kafkajs's mechanisms hand its request as authBytes). */
const LENGTH_BYTES = 4;

function lengthPrefixed(token: Uint8Array): Buffer {
  const bytes = Buffer.alloc(LENGTH_BYTES + token.length);
  bytes.writeInt32BE(token.length, 0);
  bytes.set(token, LENGTH_BYTES);
  return bytes;
}

test('advertises versions 0-2, flexible from 2', () => {
  expect([codec.key, codec.name, codec.minVersion, codec.maxVersion, codec.flexibleFrom]).toEqual([36, 'SaslAuthenticate', 0, 2, 2]);
  expect([0, 1, 2].map((version) => isFlexible(codec, version))).toEqual([false, false, true]);
});

test("kafkajs's v0 and v1 requests decode to the token, a view of the request's bytes (no copy)", async () => {
  for (const version of [0, 1]) {
    const bytes = await kafkajsEncode('saslAuthenticate', version, { authBytes: lengthPrefixed(TOKEN) });
    const { authBytes } = decodeRequest(bytes, version);
    expect(authBytes).toEqual(TOKEN);
    expect(authBytes.buffer).toBe(bytes.buffer);
    expect(authBytes.byteOffset).toBe(bytes.byteOffset + LENGTH_BYTES);
    expectEveryTruncationRejected(bytes, version);
  }
});

test('a v2 request (compact bytes) decodes to a view of its bytes too', () => {
  const bytes = grammarRequestBytes(codec, 2, { authBytes: TOKEN });
  const { authBytes } = decodeRequest(bytes, 2);
  expect(authBytes).toEqual(TOKEN);
  expect(authBytes.buffer).toBe(bytes.buffer);
  expect(authBytes.byteOffset).toBe(1); // a one-byte uvarint length
});

test('kafkajs reads a v1 response: the server token and the session lifetime', async () => {
  const bytes = encodeResponse(1, { errorCode: 0, errorMessage: null, authBytes: TOKEN, sessionLifetimeMs: 3_600_000 });
  const decoded = await kafkajsResponse('saslAuthenticate', 1).decode(bytes);
  expect(decoded.errorCode).toBe(0);
  expect(new Uint8Array(decoded.authBytes)).toEqual(new Uint8Array(lengthPrefixed(TOKEN)));
  expect(decoded.sessionLifetimeMs).toBe('3600000');
});
