// SCRAM credentials (Kafka's ScramCredential) from a password and from a salted password.
import { expect, test } from 'bun:test';
import { FerryError } from '../../../src/errors.ts';
import { saltedPasswordOf, scramCredentialFromPassword, scramCredentialFromSaltedPassword } from '../../../src/security/scram/credential.ts';
import { SCRAM_SHA_256, SCRAM_SHA_512, scramMechanismNamed, scramMechanismOfType } from '../../../src/security/scram/mechanism.ts';
import { RFC7677 } from './fixtures.ts';

test('from a password and from the salted password the admin client sends: the same credential', async () => {
  const salt = new Uint8Array(Buffer.from(RFC7677.salt, 'base64'));
  const fromPassword = await scramCredentialFromPassword(SCRAM_SHA_256, RFC7677.password, 4096, salt);
  const fromSalted = scramCredentialFromSaltedPassword(SCRAM_SHA_256, salt, saltedPasswordOf(SCRAM_SHA_256, RFC7677.password, salt, 4096), 4096);
  expect(fromPassword).toEqual(fromSalted);
  expect(fromPassword.mechanism).toBe('SCRAM-SHA-256');
  expect(fromPassword.storedKey.length).toBe(32);
  expect(fromPassword.serverKey.length).toBe(32);
});

test('a new credential gets a fresh random salt; SHA-512 keys are 64 bytes', async () => {
  const one = await scramCredentialFromPassword(SCRAM_SHA_512, 'pw');
  const two = await scramCredentialFromPassword(SCRAM_SHA_512, 'pw');
  expect(one.salt.length).toBe(32);
  expect(Buffer.from(one.salt).equals(Buffer.from(two.salt))).toBe(false);
  expect(one.storedKey.length).toBe(64);
  expect(one.iterations).toBe(4096);
});

test("iterations outside Kafka's 4096..16384 are refused", async () => {
  for (const iterations of [4095, 16385, 0, 4096.5]) {
    await expect(scramCredentialFromPassword(SCRAM_SHA_256, 'pw', iterations)).rejects.toBeInstanceOf(FerryError);
  }
  expect((await scramCredentialFromPassword(SCRAM_SHA_256, 'pw', 16384)).iterations).toBe(16384);
});

test("mechanisms by SASL name and by Kafka's type byte (0 is UNKNOWN)", () => {
  expect(scramMechanismNamed('SCRAM-SHA-512')).toBe(SCRAM_SHA_512);
  expect(scramMechanismNamed('SCRAM-SHA-1')).toBeNull();
  expect(scramMechanismOfType(1)).toBe(SCRAM_SHA_256);
  expect(scramMechanismOfType(2)).toBe(SCRAM_SHA_512);
  expect(scramMechanismOfType(0)).toBeNull();
  expect(scramMechanismOfType(3)).toBeNull();
});
