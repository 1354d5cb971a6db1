// The SCRAM client (broker to broker): what it refuses from a server, with Kafka's client messages.
import { expect, test } from 'bun:test';
import { SaslAuthenticationError } from '../../../src/security/sasl/mechanism.ts';
import { ScramSaslClient } from '../../../src/security/sasl/scram-client.ts';
import { SCRAM_SHA_256, SCRAM_SHA_512 } from '../../../src/security/scram/mechanism.ts';
import { bytes, RFC7677, text } from '../scram/fixtures.ts';

function refusedWith(client: ScramSaslClient, challenge: string): string {
  try {
    client.evaluate(bytes(challenge));
  } catch (error) {
    expect(error).toBeInstanceOf(SaslAuthenticationError);
    return (error as Error).message;
  }
  throw new Error('expected a refusal');
}

const started = (): ScramSaslClient => {
  const client = new ScramSaslClient(SCRAM_SHA_256, 'user', RFC7677.password, { nonce: RFC7677.clientNonce });
  client.start();
  return client;
};

test("a server nonce that does not extend the client's, or only repeats it, is refused", () => {
  expect(refusedWith(started(), 'r=other,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096')).toBe('Invalid server nonce: does not start with client nonce');
  expect(refusedWith(started(), `r=${RFC7677.clientNonce},s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096`)).toBe('Invalid server nonce: does not start with client nonce');
});

test('iterations below the minimum (a downgrade) and above the maximum (a server making it spin) are refused', () => {
  expect(refusedWith(started(), `r=${RFC7677.clientNonce}x,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4095`)).toBe('Requested iterations 4095 is less than the minimum 4096 for SCRAM-SHA-256');
  expect(refusedWith(started(), `r=${RFC7677.clientNonce}x,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=16385`)).toBe('Requested iterations 16385 is more than the maximum 16384 for SCRAM-SHA-256');
  expect(refusedWith(started(), `r=${RFC7677.clientNonce}x,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=99999999999999999999`)).toStartWith('Invalid SCRAM server message');
});

test('a wrong server signature, a server error and malformed messages are refused; the client is then over', () => {
  const client = started();
  client.evaluate(bytes(RFC7677.serverFirst));
  expect(refusedWith(client, 'v=AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=')).toBe('Invalid server signature in server final message');
  expect(refusedWith(client, RFC7677.serverFinal)).toBe('Unexpected challenge in Sasl client state FAILED');

  const erred = started();
  erred.evaluate(bytes(RFC7677.serverFirst));
  expect(refusedWith(erred, 'e=invalid-proof')).toBe('Sasl authentication using SCRAM-SHA-256 failed with error: invalid-proof');

  for (const first of ['', 'r=x', 's=abc,r=x,i=4096', `r=${RFC7677.clientNonce}x,s=not base64!,i=4096`, `m=x,r=${RFC7677.clientNonce}x,s=AAAA,i=4096`]) {
    expect(refusedWith(started(), first)).toStartWith('Invalid SCRAM server message');
  }
});

test('user names are escaped in the client-first message', () => {
  const client = new ScramSaslClient(SCRAM_SHA_512, 'a,b=c', 'pw', { nonce: 'N' });
  expect(text(client.start())).toBe('n,,n=a=2Cb=3Dc,r=N');
});
