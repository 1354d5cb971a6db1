// The SCRAM server: RFC 5802 / RFC 7677 vectors, full exchanges, refusals with Kafka's messages.
import { describe, expect, test } from 'bun:test';
import { SaslAuthenticationError, invalidCredentialsMessage, type SaslStep } from '../../../src/security/sasl/mechanism.ts';
import { ScramSaslClient } from '../../../src/security/sasl/scram-client.ts';
import { SCRAM_AUTHZID_DIFFERS, ScramSaslServerFactory } from '../../../src/security/sasl/scram-server.ts';
import { SCRAM_MECHANISMS, SCRAM_SHA_256, SCRAM_SHA_512 } from '../../../src/security/scram/mechanism.ts';
import { clientKeyOf, hash, hmac, saltedPasswordOf, xor } from '../../../src/security/scram/credential.ts';
import { bytes, credentialOf, exchange, RFC5802, RFC7677, SCRAM_SHA_1_FOR_TESTS, tableLookup, TEST_SECRET, text } from '../scram/fixtures.ts';

const salt = (base64: string): Uint8Array => new Uint8Array(Buffer.from(base64, 'base64'));

async function refusal(promise: Promise<unknown>): Promise<SaslAuthenticationError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(SaslAuthenticationError);
    return error as SaslAuthenticationError;
  }
  throw new Error('expected a refusal');
}

function challengeOf(step: SaslStep): string {
  if (step.done) throw new Error('expected a challenge');
  return text(step.challenge);
}

describe('RFC vectors, byte for byte', () => {
  for (const [name, mechanism, vector] of [
    ['RFC 5802 (SHA-1)', SCRAM_SHA_1_FOR_TESTS, RFC5802],
    ['RFC 7677 (SHA-256)', SCRAM_SHA_256, RFC7677],
  ] as const) {
    test(`${name}: the server answers the RFC's messages`, async () => {
      const credentials = tableLookup([['user', credentialOf(mechanism, vector.password, salt(vector.salt))]]);
      const server = new ScramSaslServerFactory(mechanism, { credentials, unknownUserSecret: TEST_SECRET, nonce: () => vector.serverNonce }).create();
      expect(challengeOf(await server.evaluate(bytes(vector.clientFirst)))).toBe(vector.serverFirst);
      const last = await server.evaluate(bytes(vector.clientFinal));
      expect(last.done).toBe(true);
      if (!last.done) return;
      expect(text(last.response)).toBe(vector.serverFinal);
      expect(last.principal).toEqual({ type: 'User', name: 'user' });
      expect(last.credentialExpiresAtMs).toBeNull();
    });

    test(`${name}: the client sends the RFC's messages and accepts the server's signature`, () => {
      const client = new ScramSaslClient(mechanism, 'user', vector.password, { nonce: vector.clientNonce });
      expect(text(client.start())).toBe(vector.clientFirst);
      expect(text(client.evaluate(bytes(vector.serverFirst))!)).toBe(vector.clientFinal);
      expect(client.evaluate(bytes(vector.serverFinal))).toBeNull();
      expect(client.complete).toBe(true);
    });
  }
});

describe('full exchanges', () => {
  for (const mechanism of SCRAM_MECHANISMS) {
    test(`${mechanism.name}: user names with ',', '=' and beyond ASCII log in as themselves`, async () => {
      const users = ['alice', 'a,b=c', '=2C', 'ünïcødé-用户', 'x'.repeat(300)];
      const credentials = tableLookup(users.map((user) => [user, credentialOf(mechanism, `${user}-secret`, bytes(`salt-${user}`))]));
      const factory = new ScramSaslServerFactory(mechanism, { credentials, unknownUserSecret: TEST_SECRET });
      for (const user of users) {
        const done = await exchange(new ScramSaslClient(mechanism, user, `${user}-secret`), factory.create());
        expect(done.principal.name).toBe(user);
      }
    });

    test(`${mechanism.name}: a wrong password and an unknown user get the same answer at the same step`, async () => {
      const credentials = tableLookup([['alice', credentialOf(mechanism, 'right', bytes('some salt'))]]);
      const factory = new ScramSaslServerFactory(mechanism, { credentials, unknownUserSecret: TEST_SECRET });
      const wrong = await refusal(exchange(new ScramSaslClient(mechanism, 'alice', 'wrong'), factory.create()));
      const unknown = await refusal(exchange(new ScramSaslClient(mechanism, 'mallory', 'anything'), factory.create()));
      expect(wrong.message).toBe(`Authentication failed during authentication due to invalid credentials with SASL mechanism ${mechanism.name}`);
      expect(unknown.message).toBe(wrong.message);
      expect(unknown.invalidCredentials && wrong.invalidCredentials).toBe(true);
      expect(invalidCredentialsMessage(mechanism.name, true)).toBe(`Authentication failed during re-authentication due to invalid credentials with SASL mechanism ${mechanism.name}`);
    });
  }

  test('an unknown user gets a server-first of the same shape, the same salt every time, and per user', async () => {
    const credentials = tableLookup([]);
    const first = async (user: string, secret = TEST_SECRET): Promise<URLSearchParams> => {
      const server = new ScramSaslServerFactory(SCRAM_SHA_512, { credentials, unknownUserSecret: secret }).create();
      const answer = challengeOf(await server.evaluate(bytes(`n,,n=${user},r=abcdef`)));
      return new URLSearchParams(answer.replaceAll(',', '&').replaceAll('+', '%2B'));
    };
    const once = await first('ghost');
    const twice = await first('ghost');
    expect(once.get('s')).toBe(twice.get('s')!);
    expect(once.get('i')).toBe('4096');
    expect(once.get('r')!.startsWith('abcdef')).toBe(true);
    expect(once.get('r')).not.toBe(twice.get('r')); // fresh server nonces
    expect(Buffer.from(once.get('s')!, 'base64').length).toBe(32);
    expect((await first('other')).get('s')).not.toBe(once.get('s')!);
    expect((await first('ghost', new Uint8Array(32).fill(9))).get('s')).not.toBe(once.get('s')!);
  });

  test("a credential with fewer iterations than Kafka's minimum is refused like an unknown user", async () => {
    const weak = credentialOf(SCRAM_SHA_256, 'pw', bytes('salt'), 1000);
    const factory = new ScramSaslServerFactory(SCRAM_SHA_256, { credentials: tableLookup([['weak', weak]]), unknownUserSecret: TEST_SECRET });
    const server = factory.create();
    const serverFirst = challengeOf(await server.evaluate(bytes('n,,n=weak,r=nonce')));
    expect(serverFirst).toEndWith(',i=4096'); // the fake, not the stored 1000
  });
});

describe('refusals', () => {
  const mechanism = SCRAM_SHA_256;
  const vector = RFC7677;
  const credentials = tableLookup([['user', credentialOf(mechanism, vector.password, salt(vector.salt))]]);
  const factory = (nonce = (): string => vector.serverNonce): ScramSaslServerFactory => new ScramSaslServerFactory(mechanism, { credentials, unknownUserSecret: TEST_SECRET, nonce });
  const generic = invalidCredentialsMessage(mechanism.name);

  test('a client-final replayed into another exchange (another server nonce) is refused', async () => {
    const replayed = factory(() => 'another-nonce').create();
    await replayed.evaluate(bytes(vector.clientFirst));
    expect((await refusal(replayed.evaluate(bytes(vector.clientFinal)))).message).toBe(generic);
  });

  test('a client-final whose nonce is only the client part, or altered, is refused', async () => {
    for (const final of [`c=biws,r=${vector.clientNonce},p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=`, vector.clientFinal.replace('k0,p=', 'k1,p=')]) {
      const server = factory().create();
      await server.evaluate(bytes(vector.clientFirst));
      const error = await refusal(server.evaluate(bytes(final)));
      expect(error.message).toBe(generic);
    }
  });

  test("librdkafka's client-final, its own nonce again before the server's, is taken as Kafka takes it (endsWith), its proof checked over what it sent", async () => {
    const clientFirstBare = vector.clientFirst.slice('n,,'.length);
    const withoutProof = `c=biws,r=${vector.clientNonce}${vector.clientNonce}${vector.serverNonce}`;
    const proofOver = (authMessage: string): string => {
      const salted = saltedPasswordOf(mechanism, vector.password, salt(vector.salt), 4096);
      const clientKey = clientKeyOf(mechanism, salted);
      return Buffer.from(xor(clientKey, hmac(mechanism, hash(mechanism, clientKey), authMessage))).toString('base64');
    };
    const server = factory().create();
    await server.evaluate(bytes(vector.clientFirst));
    const done = await server.evaluate(bytes(`${withoutProof},p=${proofOver(`${clientFirstBare},${vector.serverFirst},${withoutProof}`)}`));
    expect(done.done).toBe(true);
    // The same shape with the proof of the exact nonce (what the text does not say) is refused: the proof covers the text sent.
    const other = factory().create();
    await other.evaluate(bytes(vector.clientFirst));
    const exactProof = proofOver(`${clientFirstBare},${vector.serverFirst},c=biws,r=${vector.clientNonce}${vector.serverNonce}`);
    expect((await refusal(other.evaluate(bytes(`${withoutProof},p=${exactProof}`)))).message).toBe(generic);
  });

  test('a wrong proof, a short proof, and channel binding data other than the gs2 header are refused', async () => {
    for (const final of [
      vector.clientFinal.replace('p=dHzb', 'p=eHzb'),
      vector.clientFinal.replace(/p=.*$/, 'p=AAAA'),
      vector.clientFinal.replace('c=biws', 'c=eSws'), // "y,,"
    ]) {
      const server = factory().create();
      await server.evaluate(bytes(vector.clientFirst));
      expect((await refusal(server.evaluate(bytes(final)))).message).toBe(generic);
    }
  });

  test("an authzid equal to the user is taken (its gs2 header is the channel binding); another is refused with Kafka's message", async () => {
    const client = new ScramSaslClient(mechanism, 'user', vector.password, { nonce: vector.clientNonce });
    client.start();
    // The same exchange with `a=user`: computed by hand, since Kafka's client never sends an authzid.
    const server = factory().create();
    const serverFirst = challengeOf(await server.evaluate(bytes(`n,a=user,n=user,r=${vector.clientNonce}`)));
    expect(serverFirst).toBe(vector.serverFirst);
    const { hash, hmac, xor, saltedPasswordOf, clientKeyOf } = await import('../../../src/security/scram/credential.ts');
    const salted = saltedPasswordOf(mechanism, vector.password, salt(vector.salt), 4096);
    const withoutProof = `c=${Buffer.from('n,a=user,').toString('base64')},r=${vector.clientNonce}${vector.serverNonce}`;
    const authMessage = `n=user,r=${vector.clientNonce},${serverFirst},${withoutProof}`;
    const clientKey = clientKeyOf(mechanism, salted);
    const proof = xor(clientKey, hmac(mechanism, hash(mechanism, clientKey), authMessage));
    const done = await server.evaluate(bytes(`${withoutProof},p=${Buffer.from(proof).toString('base64')}`));
    expect(done.done).toBe(true);

    const other = await refusal(
      factory()
        .create()
        .evaluate(bytes(`n,a=admin,n=user,r=${vector.clientNonce}`)),
    );
    expect(other.message).toBe(SCRAM_AUTHZID_DIFFERS);
    expect(other.message).toBe('Authentication failed: Client requested an authorization id that is different from username');
  });

  test("what Kafka's server does not take in a client-first message gets the generic answer", async () => {
    for (const first of [
      'y,,n=user,r=abc', // channel binding supported by the client
      'p=tls-unique,,n=user,r=abc', // channel binding required
      'n,,m=ext,n=user,r=abc', // a mandatory extension
      'n,,n=user,r=abc,tokenauth=true', // a delegation token
      'n,,n=us=er,r=abc', // '=' outside an escape
      'n,,n=,r=abc',
      'n,,n=user,r=',
      'n,,n=user,r=a b',
      'n,,n=user',
      'n,x,n=user,r=abc',
      '',
    ]) {
      const error = await refusal(factory().create().evaluate(bytes(first)));
      expect(error.message).toBe(generic);
    }
  });

  test('tokenauth=false and unknown extensions are ignored, as Kafka does', async () => {
    const server = factory().create();
    expect(challengeOf(await server.evaluate(bytes(`${vector.clientFirst},tokenauth=false,other=x`)))).toStartWith('r=');
  });

  test('a failing lookup is the generic answer; a token after the end is refused', async () => {
    const failing = new ScramSaslServerFactory(mechanism, { credentials: { lookup: () => Promise.reject(new Error('store down')) }, unknownUserSecret: TEST_SECRET }).create();
    const error = await refusal(failing.evaluate(bytes(vector.clientFirst)));
    expect(error.message).toBe(generic);
    expect(error.detail).toContain('store down');
    await refusal(failing.evaluate(bytes(vector.clientFirst))); // failed: over

    const server = factory().create();
    await server.evaluate(bytes(vector.clientFirst));
    expect((await server.evaluate(bytes(vector.clientFinal))).done).toBe(true);
    expect((await refusal(server.evaluate(bytes(vector.clientFinal)))).message).toBe('Unexpected challenge in Sasl server state COMPLETE');
  });

  test('an oversized or non-UTF-8 token is refused before it is read', async () => {
    expect((await refusal(factory().create().evaluate(new Uint8Array(20_000).fill(0x61)))).message).toBe(generic);
    expect(
      (
        await refusal(
          factory()
            .create()
            .evaluate(new Uint8Array([0x6e, 0x2c, 0x2c, 0xff])),
        )
      ).message,
    ).toBe(generic);
  });
});
