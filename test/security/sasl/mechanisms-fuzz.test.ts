// Every mechanism, either side, fed arbitrary bytes: a step, or a SaslAuthenticationError, never
// anything else (no crash on any input).
import { expect, test } from 'bun:test';
import fc from 'fast-check';
import { SaslAuthenticationError, type SaslServerFactory } from '../../../src/security/sasl/mechanism.ts';
import { PlainSaslClient, PlainSaslServerFactory, plainUsersFrom } from '../../../src/security/sasl/plain.ts';
import { ScramSaslClient } from '../../../src/security/sasl/scram-client.ts';
import { ScramSaslServerFactory } from '../../../src/security/sasl/scram-server.ts';
import { SCRAM_SHA_256, SCRAM_SHA_512 } from '../../../src/security/scram/mechanism.ts';
import { bytes, credentialOf, tableLookup, TEST_SECRET } from '../scram/fixtures.ts';

const credentials = tableLookup([
  ['user', credentialOf(SCRAM_SHA_256, 'pencil', bytes('salt'))],
  ['user', credentialOf(SCRAM_SHA_512, 'pencil', bytes('salt'))],
]);
const servers: readonly SaslServerFactory[] = [
  new PlainSaslServerFactory(plainUsersFrom(new Map([['user', 'pencil']]))),
  new ScramSaslServerFactory(SCRAM_SHA_256, { credentials, unknownUserSecret: TEST_SECRET }),
  new ScramSaslServerFactory(SCRAM_SHA_512, { credentials, unknownUserSecret: TEST_SECRET }),
];

/** Bytes of text made of the characters SCRAM and PLAIN give meaning to, so that parsers get deep. */
const meaningful = fc
  .array(fc.constantFrom('n', ',', '=', 'a=', 'n=', 'r=', 'c=', 'p=', 's=', 'i=', 'm=', 'biws', 'user', '=2C', '=3D', '\0', 'tokenauth=true', 'AAAA', '4096', 'é', '\uffff', 'pencil'), {
    maxLength: 24,
  })
  .map((parts) => bytes(parts.join('')));
const token = fc.oneof(fc.uint8Array({ maxLength: 300 }), meaningful);

async function onlySaslErrors(run: () => Promise<unknown> | unknown): Promise<void> {
  try {
    await run();
  } catch (error) {
    if (!(error instanceof SaslAuthenticationError)) throw error;
  }
}

test('servers: any sequence of tokens gives steps or SaslAuthenticationError', async () => {
  for (const factory of servers) {
    await fc.assert(
      fc.asyncProperty(fc.array(token, { minLength: 1, maxLength: 3 }), async (tokens) => {
        const server = factory.create();
        for (const each of tokens) await onlySaslErrors(() => server.evaluate(each));
      }),
      { numRuns: 400 },
    );
  }
});

test('SCRAM servers: after a valid client-first, any client-final gives a step or SaslAuthenticationError', async () => {
  for (const factory of servers.slice(1)) {
    await fc.assert(
      fc.asyncProperty(token, fc.string({ maxLength: 40 }), fc.boolean(), async (final, suffix, shape) => {
        const server = factory.create();
        const first = await server.evaluate(bytes('n,,n=user,r=clientnonce'));
        expect(first.done).toBe(false);
        const nonce = first.done ? '' : new TextDecoder().decode(first.challenge).split(',')[0]!.slice(2);
        const shaped = bytes(`c=biws,r=${nonce}${suffix},p=${Buffer.from(final).toString('base64')}`);
        await onlySaslErrors(() => server.evaluate(shape ? shaped : final));
      }),
      { numRuns: 300 },
    );
  }
});

test('clients: any server answer gives a token, the end, or SaslAuthenticationError', async () => {
  await fc.assert(
    fc.asyncProperty(fc.array(token, { minLength: 1, maxLength: 2 }), fc.boolean(), async (challenges, sha512) => {
      const scram = new ScramSaslClient(sha512 ? SCRAM_SHA_512 : SCRAM_SHA_256, 'user', 'pencil', { nonce: 'cn' });
      scram.start();
      const plain = new PlainSaslClient('user', 'pencil');
      plain.start();
      for (const challenge of challenges) {
        await onlySaslErrors(() => scram.evaluate(challenge));
        await onlySaslErrors(() => plain.evaluate(challenge));
      }
    }),
    { numRuns: 400 },
  );
});

test('SCRAM clients: server-first messages shaped right but for their values, then any server-final', async () => {
  const serverFirst = fc
    .tuple(
      fc.oneof(fc.stringMatching(/^[a-z]{0,8}$/), fc.string({ maxLength: 12 })),
      fc.uint8Array({ maxLength: 40 }),
      fc.constantFrom('0', '1', '4095', '4096', '16385', '99999999999', '-1', 'x'),
      fc.constantFrom('', ',e=1', ',bad', ',x='),
    )
    .map(([suffix, salt, iterations, tail]) => bytes(`r=cn${suffix},s=${Buffer.from(salt).toString('base64')},i=${iterations}${tail}`));
  await fc.assert(
    fc.asyncProperty(serverFirst, token, fc.boolean(), async (first, final, sha512) => {
      const scram = new ScramSaslClient(sha512 ? SCRAM_SHA_512 : SCRAM_SHA_256, 'user', 'pencil', { nonce: 'cn' });
      scram.start();
      await onlySaslErrors(() => scram.evaluate(first));
      await onlySaslErrors(() => scram.evaluate(final));
    }),
    { numRuns: 200 },
  );
});
