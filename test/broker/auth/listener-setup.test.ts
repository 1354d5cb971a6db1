// What stops a broker at start because of its listeners' security (src/broker/auth/listener-setup.ts,
// src/security/tls/tls-material.ts, the inter-broker client): one line naming the listener and
// the setting, never a password, and nothing left listening.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { BrokerSecurityOptions } from '../../../src/broker/auth/broker-security.ts';
import type { ListenerConfig } from '../../../src/broker/auth/listener-config.ts';
import { Broker } from '../../../src/broker/broker.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { DEFAULT_TLS_SETTINGS, type TlsSettings } from '../../../src/security/tls/tls-settings.ts';
import { makeCertificates, type TestCertificates } from '../../support/certificates.ts';

setDefaultTimeout(30_000);

const KEY_PASSWORD = 'key-password-never-printed';
const directory = mkdtempSync(join(tmpdir(), 'ferry-auth-setup-'));
let certificates: TestCertificates;
let encryptedKeyPath: string;
const path = (name: string) => join(directory, name);

beforeAll(() => {
  certificates = makeCertificates(join(directory, 'certs'), ['alice']);
  encryptedKeyPath = path('encrypted.key');
  const result = Bun.spawnSync(['openssl', 'pkey', '-in', certificates.serverKeyPath, '-aes256', '-passout', `pass:${KEY_PASSWORD}`, '-out', encryptedKeyPath]);
  expect(result.exitCode).toBe(0);
  writeFileSync(path('key-only.pem'), readFileSync(certificates.serverKeyPath));
  writeFileSync(path('mismatched.pem'), `${readFileSync(certificates.client('alice').keyPath, 'utf8')}${readFileSync(certificates.serverCertPath, 'utf8')}`);
  writeFileSync(path('not-a-crl.pem'), readFileSync(certificates.caPath));
});

afterAll(() => rmSync(directory, { recursive: true, force: true }));

const ssl = (settings: Partial<TlsSettings>, name = 'SECURE'): ListenerConfig => ({ name, protocol: 'SSL', host: '127.0.0.1', port: 0, tls: { ...DEFAULT_TLS_SETTINGS, ...settings } });
const sasl = (sasl: ListenerConfig['sasl'], name = 'SASL'): ListenerConfig => ({ name, protocol: 'SASL_PLAINTEXT', host: '127.0.0.1', port: 0, ...(sasl === undefined ? {} : { sasl }) });

/** The start's failure: its message (one line, no password), the broker never started. */
async function startFailure(listeners: readonly ListenerConfig[], security: BrokerSecurityOptions = {}): Promise<string> {
  const started = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    log: () => {},
    listeners,
    security,
    engine: { directory: mkdtempSync(join(directory, 'data-')), log: { flush: { kind: 'none' } }, wal: { store: new MemoryStore(), writerId: 'broker-1' } },
  }).then(
    (broker) => broker,
    (error: Error) => error,
  );
  if (started instanceof Broker) {
    await started.stop();
    throw new Error('the broker started');
  }
  expect(started.message).not.toContain('\n');
  expect(started.message).not.toContain(KEY_PASSWORD);
  return started.message;
}

const cases: [string, () => [readonly ListenerConfig[], BrokerSecurityOptions?], () => string | RegExp][] = [
  ['an SSL listener without TLS settings', () => [[{ name: 'SECURE', protocol: 'SSL', host: '127.0.0.1', port: 0 }]], () => 'listener SECURE (SSL) needs TLS settings: ssl.keystore.location at least'],
  ['no keystore', () => [[ssl({})]], () => /^listener SECURE: a TLS listener needs ssl\.keystore\.location/],
  ['a keystore file that is not there', () => [[ssl({ keystoreLocation: path('missing.pem') })]], () => `listener SECURE: ssl.keystore.location ${path('missing.pem')} cannot be read (ENOENT)`],
  ['a keystore without a certificate', () => [[ssl({ keystoreLocation: path('key-only.pem') })]], () => `listener SECURE: ssl.keystore.location ${path('key-only.pem')} holds no PEM certificate`],
  [
    'a keystore without a key',
    () => [[ssl({ keystoreLocation: certificates.serverCertPath })]],
    () => `listener SECURE: ssl.keystore.location ${certificates.serverCertPath} holds no PEM private key`,
  ],
  ["a key that is not the certificate's", () => [[ssl({ keystoreLocation: path('mismatched.pem') })]], () => /^listener SECURE: the keystore's private key does not belong to its first certificate/],
  [
    'an encrypted key without ssl.key.password',
    () => [[ssl({ keystoreKey: readFileSync(encryptedKeyPath, 'utf8'), keystoreCertificateChain: readFileSync(certificates.serverCertPath, 'utf8') })]],
    () => "listener SECURE: the keystore's private key is encrypted: set ssl.key.password",
  ],
  [
    'an encrypted key with the wrong password',
    () => [[ssl({ keystoreKey: readFileSync(encryptedKeyPath, 'utf8'), keystoreCertificateChain: readFileSync(certificates.serverCertPath, 'utf8'), keyPassword: 'wrong' })]],
    () => "listener SECURE: the keystore's private key does not decrypt with ssl.key.password",
  ],
  [
    'a keystore both as a file and as text',
    () => [[ssl({ keystoreLocation: certificates.serverPemPath, keystoreKey: 'x', keystoreCertificateChain: 'y' })]],
    () => /^listener SECURE: give the keystore as ssl\.keystore\.location or as ssl\.keystore\.key/,
  ],
  [
    'ssl.client.auth=required without a truststore',
    () => [[ssl({ keystoreLocation: certificates.serverPemPath, clientAuth: 'required' })]],
    () => /^listener SECURE: ssl\.client\.auth=required needs ssl\.truststore\.location/,
  ],
  [
    'a CRL file without a CRL',
    () => [[ssl({ keystoreLocation: certificates.serverPemPath, truststoreLocation: certificates.caPath, crlLocation: path('not-a-crl.pem'), clientAuth: 'required' })]],
    () => /^listener SECURE: ferry\.ssl\.crl\.location .* holds no PEM CRL/,
  ],
  ['mapping rules that do not parse', () => [[ssl({ keystoreLocation: certificates.serverPemPath, principalMappingRules: 'RULE:^CN=(.*$/$1/' })]], () => /ssl\.principal\.mapping\.rules/],
  [
    'a SASL listener without mechanisms',
    () => [[sasl(undefined)]],
    () => 'listener SASL uses SASL: set sasl.enabled.mechanisms (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER; Ferry has no GSSAPI)',
  ],
  ['GSSAPI', () => [[sasl({ mechanisms: ['GSSAPI'] })]], () => 'listener SASL: SASL mechanism GSSAPI is not one Ferry serves (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)'],
  ['PLAIN without users', () => [[sasl({ mechanisms: ['PLAIN'] })]], () => /^listener SASL: PLAIN needs its users: user_NAME="password" entries/],
  ['OAUTHBEARER without a JWKS', () => [[sasl({ mechanisms: ['OAUTHBEARER'] })]], () => 'listener SASL: OAUTHBEARER needs sasl.oauthbearer.jwks.endpoint.url (a JWKS file) to validate tokens with'],
  [
    'OAUTHBEARER with a JWKS file that is not there',
    () => [[sasl({ mechanisms: ['OAUTHBEARER'], oauthBearer: { mode: 'jwks', jwksEndpointUrl: `file://${path('missing-jwks.json')}` } })]],
    () => /^listener SASL: .*missing-jwks\.json/,
  ],
  [
    'an inter-broker mechanism brokers cannot log in with',
    () => [[ssl({ keystoreLocation: certificates.serverPemPath })], { interBroker: { listener: 'SECURE', tls: null, sasl: { mechanism: 'OAUTHBEARER', username: 'b', password: KEY_PASSWORD } } }],
    () => /^the inter-broker client \(listener SECURE\): sasl\.mechanism\.inter\.broker\.protocol OAUTHBEARER is not one a broker can authenticate with/,
  ],
  [
    'an inter-broker truststore that is not there',
    () => [[ssl({ keystoreLocation: certificates.serverPemPath })], { interBroker: { listener: 'SECURE', tls: { ...DEFAULT_TLS_SETTINGS, truststoreLocation: path('missing-ca.pem') }, sasl: null } }],
    () => `the inter-broker client (listener SECURE): ssl.truststore.location ${path('missing-ca.pem')} cannot be read (ENOENT)`,
  ],
];

for (const [what, setup, expected] of cases) {
  test(`${what}: the start fails in one line naming the setting`, async () => {
    const [listeners, security] = setup();
    const message = await startFailure(listeners, security);
    const wanted = expected();
    if (typeof wanted === 'string') expect(message).toBe(wanted);
    else expect(message).toMatch(wanted);
  });
}
