// Shared by the SCRAM tests: RFC vectors, a fixed credential table and an exchange driver.
import { saltedPasswordOf, scramCredentialFromSaltedPassword, type ScramCredential, type ScramCredentialLookup } from '../../../src/security/scram/credential.ts';
import type { ScramMechanism } from '../../../src/security/scram/mechanism.ts';
import type { SaslClient, SaslServer, SaslStep } from '../../../src/security/sasl/mechanism.ts';

/** RFC 5802 section 5 (SCRAM-SHA-1): user "user", password "pencil". */
export const RFC5802 = {
  password: 'pencil',
  clientNonce: 'fyko+d2lbbFgONRv9qkxdawL',
  serverNonce: '3rfcNHYJY1ZVvWVs7j',
  salt: 'QSXCR+Q6sek8bf92',
  clientFirst: 'n,,n=user,r=fyko+d2lbbFgONRv9qkxdawL',
  serverFirst: 'r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,s=QSXCR+Q6sek8bf92,i=4096',
  clientFinal: 'c=biws,r=fyko+d2lbbFgONRv9qkxdawL3rfcNHYJY1ZVvWVs7j,p=v0X8v3Bz2T0CJGbJQyF0X+HI4Ts=',
  serverFinal: 'v=rmF9pqV8S7suAoZWja4dJRkFsKQ=',
} as const;

/** RFC 7677 section 3 (SCRAM-SHA-256): user "user", password "pencil". */
export const RFC7677 = {
  password: 'pencil',
  clientNonce: 'rOprNGfwEbeRWgbNEkqO',
  serverNonce: '%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0',
  salt: 'W22ZaJ0SNY7soEsUEjb6gQ==',
  clientFirst: 'n,,n=user,r=rOprNGfwEbeRWgbNEkqO',
  serverFirst: 'r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,s=W22ZaJ0SNY7soEsUEjb6gQ==,i=4096',
  clientFinal: 'c=biws,r=rOprNGfwEbeRWgbNEkqO%hvYDpWUa2RaTCAfuxFIlj)hNlF$k0,p=dHzbZapWIk4jUhN+Ute9ytag9zjfMHgsqmmiz7AndVQ=',
  serverFinal: 'v=6rriTRBi23WpRR/wtup+mMhUZUn/dB5nLTJRsjl95G4=',
} as const;

/** SCRAM-SHA-1 (RFC 5802's vectors): no Kafka mechanism, but the same algorithm with another hash. */
export const SCRAM_SHA_1_FOR_TESTS: ScramMechanism = { name: 'SCRAM-SHA-1', type: 99, hash: 'sha1', keyBytes: 20, iterationsMin: 4096, iterationsMax: 16384 };

export const TEST_SECRET = new Uint8Array(32).fill(7);

export function credentialOf(mechanism: ScramMechanism, password: string, salt: Uint8Array, iterations = 4096): ScramCredential {
  return scramCredentialFromSaltedPassword(mechanism, salt, saltedPasswordOf(mechanism, password, salt, iterations), iterations);
}

/** A fixed table: `${user}/${mechanism}` -> credential. */
export function tableLookup(entries: readonly [user: string, credential: ScramCredential][]): ScramCredentialLookup {
  const table = new Map(entries.map(([user, credential]) => [`${user}/${credential.mechanism}`, credential]));
  return { lookup: (user, mechanism) => table.get(`${user}/${mechanism}`) ?? null };
}

export const text = (bytes: Uint8Array): string => new TextDecoder().decode(bytes);
export const bytes = (value: string): Uint8Array => new TextEncoder().encode(value);

/** Runs a client against a server to the end; the server's last step. Throws what either throws. */
export async function exchange(client: SaslClient, server: SaslServer): Promise<Extract<SaslStep, { done: true }>> {
  let token: Uint8Array | null = client.start();
  for (let round = 0; round < 4; round++) {
    const step = await server.evaluate(token!);
    if (step.done) {
      token = client.evaluate(step.response);
      if (token !== null) throw new Error('the client wants to go on after the server finished');
      return step;
    }
    token = client.evaluate(step.challenge);
    if (token === null) throw new Error('the client finished before the server');
  }
  throw new Error('no end after 4 rounds');
}
