// SASL/PLAIN: RFC 4616 tokens against a user table, Kafka's PlainSaslServer answers.
import { describe, expect, test } from 'bun:test';
import { SaslAuthenticationError, invalidCredentialsMessage } from '../../../src/security/sasl/mechanism.ts';
import {
  PLAIN_AUTHZID_DIFFERS,
  PLAIN_CREDENTIALS_UNVERIFIABLE,
  PLAIN_FIELD_BYTES_MAX,
  PLAIN_INVALID_USER_OR_PASSWORD,
  PlainSaslClient,
  PlainSaslServerFactory,
  plainUsersFrom,
} from '../../../src/security/sasl/plain.ts';
import { bytes } from '../scram/fixtures.ts';

const users = plainUsersFrom(
  new Map([
    ['admin', 'admin-secret'],
    ['alice', 'alice-secret'],
    ['ünï', 'pässwörd'],
  ]),
);
const factory = new PlainSaslServerFactory(users);
const generic = invalidCredentialsMessage('PLAIN');

async function refusal(token: Uint8Array, server = factory.create()): Promise<SaslAuthenticationError> {
  try {
    await server.evaluate(token);
  } catch (error) {
    expect(error).toBeInstanceOf(SaslAuthenticationError);
    return error as SaslAuthenticationError;
  }
  throw new Error('expected a refusal');
}

describe('PLAIN server', () => {
  test('a user with the right password is that user, in one step with an empty answer', async () => {
    for (const token of ['\0alice\0alice-secret', `${'alice\0alice-secret\0'.slice(0, 0)}alice\0alice\0alice-secret`, '\0ünï\0pässwörd']) {
      const step = await factory.create().evaluate(bytes(token));
      expect(step.done).toBe(true);
      if (!step.done) continue;
      expect(step.response.length).toBe(0);
      expect(step.principal.type).toBe('User');
      expect(['alice', 'ünï']).toContain(step.principal.name);
      expect(step.credentialExpiresAtMs).toBeNull();
    }
  });

  test("a wrong password and an unknown user get the same answer, Kafka's", async () => {
    const wrong = await refusal(bytes('\0alice\0admin-secret'));
    const unknown = await refusal(bytes('\0mallory\0alice-secret'));
    expect(wrong.message).toBe('Authentication failed: Invalid username or password');
    expect(unknown.message).toBe(PLAIN_INVALID_USER_OR_PASSWORD);
    expect(wrong.detail + unknown.detail).not.toContain('secret');
  });

  test("an authzid other than the user is refused after the password check, with Kafka's message", async () => {
    expect((await refusal(bytes('admin\0alice\0alice-secret'))).message).toBe(PLAIN_AUTHZID_DIFFERS);
    expect((await refusal(bytes('admin\0alice\0wrong'))).message).toBe(PLAIN_INVALID_USER_OR_PASSWORD);
  });

  test('malformed tokens get the generic answer', async () => {
    const long = 'x'.repeat(PLAIN_FIELD_BYTES_MAX + 1);
    for (const token of [
      bytes(''),
      bytes('alice'),
      bytes('\0alice'),
      bytes('\0\0secret'),
      bytes('\0alice\0'),
      bytes('\0alice\0pw\0extra'),
      bytes(`\0${long}\0pw`),
      new Uint8Array([0, 0x61, 0, 0xc3, 0x28]),
      new Uint8Array(4000),
    ]) {
      const error = await refusal(token);
      expect(error.message).toBe(generic);
      expect(error.invalidCredentials).toBe(true);
    }
  });

  test('a failing user lookup is Kafka\'s "could not be verified"; an async lookup works', async () => {
    const failing = new PlainSaslServerFactory({
      passwordOf: () => {
        throw new Error('ldap down');
      },
    });
    expect((await refusal(bytes('\0alice\0pw'), failing.create())).message).toBe(PLAIN_CREDENTIALS_UNVERIFIABLE);
    const slow = new PlainSaslServerFactory({ passwordOf: async (user) => (user === 'bob' ? 'pw' : null) });
    expect((await slow.create().evaluate(bytes('\0bob\0pw'))).done).toBe(true);
  });

  test('one exchange per server: a second token is refused', async () => {
    const server = factory.create();
    await server.evaluate(bytes('\0alice\0alice-secret'));
    expect((await refusal(bytes('\0alice\0alice-secret'), server)).message).toBe('Unexpected challenge in Sasl server state COMPLETE');
  });
});

describe('PLAIN client', () => {
  test("sends `authzid NUL user NUL password` once and completes on the server's answer", async () => {
    const client = new PlainSaslClient('alice', 'alice-secret');
    const token = client.start();
    expect(Buffer.from(token).toString()).toBe('\0alice\0alice-secret');
    const step = await factory.create().evaluate(token);
    expect(step.done).toBe(true);
    expect(client.evaluate(new Uint8Array(0))).toBeNull();
    expect(client.complete).toBe(true);
    expect(() => client.evaluate(new Uint8Array(0))).toThrow(SaslAuthenticationError);
  });

  test('refuses credentials it cannot send, without echoing them', () => {
    expect(() => new PlainSaslClient('', 'pw')).toThrow('PLAIN needs a username and a password');
    expect(() => new PlainSaslClient('a', 'se\0cret')).toThrow('the PLAIN password must not contain NUL');
  });
});
