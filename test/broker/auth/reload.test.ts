// Broker.reloadSecurity() (SIGHUP): a keystore file swapped under a listener is presented to the
// connections opened after the reload, open ones keep going; a keystore that no longer reads keeps
// the old material and the error names the listener; PLAIN's users are asked again.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect as tlsConnect } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Broker } from '../../../src/broker/broker.ts';
import { PlainSaslClient } from '../../../src/security/sasl/plain.ts';
import { DEFAULT_TLS_SETTINGS } from '../../../src/security/tls/tls-settings.ts';
import { makeCertificates, type TestCertificates } from '../../support/certificates.ts';
import { SASL_LISTENER, type SecureBroker, startSecureBroker, stopBrokers } from './brokers.ts';
import { answers, authenticateFramed, call, frames, nextId, type WireClient, wireClient } from './wire.ts';

setDefaultTimeout(30_000);

const running: Broker[] = [];
const clients: WireClient[] = [];
const directory = mkdtempSync(join(tmpdir(), 'ferry-auth-reload-'));
let first: TestCertificates;
let second: TestCertificates;
let keystorePath: string;
let plainUsers = new Map([['alice', 'first-password']]);
let secure: SecureBroker;

beforeAll(async () => {
  first = makeCertificates(join(directory, 'first'), []);
  second = makeCertificates(join(directory, 'second'), []); // another CA, another server key
  keystorePath = join(directory, 'keystore.pem');
  copyFileSync(first.serverPemPath, keystorePath);
  secure = await startSecureBroker(
    {
      extraListeners: [{ name: 'SSL', protocol: 'SSL', host: '127.0.0.1', port: 0, tls: { ...DEFAULT_TLS_SETTINGS, keystoreLocation: keystorePath } }],
      sasl: { mechanisms: ['PLAIN'], plainUsers: () => plainUsers },
    },
    running,
  );
});

afterAll(async () => {
  for (const client of clients) client.end();
  await stopBrokers(running);
  rmSync(directory, { recursive: true, force: true });
});

/** The SHA-256 fingerprint of the certificate the SSL listener presents to a new connection. */
async function presented(): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: '127.0.0.1', port: secure.port('SSL'), rejectUnauthorized: false }, () => {
      resolve(socket.getPeerCertificate().fingerprint256);
      socket.end();
    });
    socket.once('error', reject);
  });
}

function fingerprintOf(path: string): string {
  return new X509Certificate(readFileSync(path)).fingerprint256;
}

async function servedOver(client: WireClient): Promise<boolean> {
  const answer = await call(client, frames.apiVersions(nextId()));
  return answer !== null && answers.apiVersions(answer).body.errorCode === 0;
}

test('a swapped keystore is presented to new connections after the reload; a connection opened before keeps working', async () => {
  expect(await presented()).toBe(fingerprintOf(first.serverCertPath));
  const before = await wireClient(secure.port('SSL'), { ca: readFileSync(first.caPath, 'utf8') });
  clients.push(before);
  expect(await servedOver(before)).toBe(true);

  copyFileSync(second.serverPemPath, keystorePath);
  expect(await presented()).toBe(fingerprintOf(first.serverCertPath)); // nothing changes until the reload
  await secure.broker.reloadSecurity();
  expect(await presented()).toBe(fingerprintOf(second.serverCertPath));

  const after = await wireClient(secure.port('SSL'), { ca: readFileSync(second.caPath, 'utf8') });
  clients.push(after);
  expect(await servedOver(after)).toBe(true);
  const oldTrust = await wireClient(secure.port('SSL'), { ca: readFileSync(first.caPath, 'utf8') });
  clients.push(oldTrust);
  expect(await servedOver(oldTrust)).toBe(false); // the old CA does not sign the new certificate
  expect(await servedOver(before)).toBe(true);
});

test('a keystore that no longer reads: the reload fails naming the listener and the file, the previous certificate stays', async () => {
  const current = await presented();
  writeFileSync(keystorePath, '-----BEGIN PRIVATE KEY-----\nnot a key\n-----END PRIVATE KEY-----\n');
  const failure = await secure.broker.reloadSecurity().then(
    () => null,
    (error: Error) => error.message,
  );
  expect(failure).toContain('reload kept the previous TLS and SASL material of listener SSL:');
  expect(failure).not.toContain('\n');
  expect(await presented()).toBe(current);

  rmSync(keystorePath);
  const missing = await secure.broker.reloadSecurity().then(
    () => null,
    (error: Error) => error.message,
  );
  expect(missing).toContain(`listener SSL: ssl.keystore.location ${keystorePath} cannot be read (ENOENT)`);
  expect(await presented()).toBe(current);
  copyFileSync(second.serverPemPath, keystorePath);
});

test("PLAIN's users are asked again on reload: the new password works, the old one no longer", async () => {
  const old = await wireClient(secure.port(SASL_LISTENER));
  clients.push(old);
  await authenticateFramed(old, new PlainSaslClient('alice', 'first-password'));
  plainUsers = new Map([['alice', 'second-password']]);
  await secure.broker.reloadSecurity();
  const renewed = await wireClient(secure.port(SASL_LISTENER));
  clients.push(renewed);
  await authenticateFramed(renewed, new PlainSaslClient('alice', 'second-password'));
  const stale = await wireClient(secure.port(SASL_LISTENER));
  clients.push(stale);
  await expect(authenticateFramed(stale, new PlainSaslClient('alice', 'first-password'))).rejects.toThrow('SaslAuthenticate answered 58');
  expect(await servedOver(old)).toBe(true); // authenticated before: the session stands
});
