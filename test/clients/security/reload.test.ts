// SIGHUP reloads a listener's certificate: a broker started with certificate A (signed by CA A);
// its keystore file is replaced by certificate B (signed by a new CA B) and the broker gets
// `kill -HUP`. New connections are served certificate B (read off the handshake), a client that
// trusts only CA A can no longer connect, one that trusts CA B can; connections opened before the
// reload keep working with A.
import { afterAll, beforeAll, expect, setDefaultTimeout, test } from 'bun:test';
import { X509Certificate } from 'node:crypto';
import { copyFileSync, mkdtempSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { connect, type TLSSocket } from 'node:tls';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Producer } from 'kafkajs';
import { makeCertificates, type TestCertificates } from '../../support/certificates.ts';
import { SecureBroker } from '../../support/secure-broker.ts';
import { describeClient, missingCommand } from '../support/tools.ts';
import { kafkajsClient, kafkajsProduceRefused } from './support/kafkajs-clients.ts';
import { kcatConsume, kcatProduce, kcatSsl } from './support/kcat.ts';

setDefaultTimeout(30_000);

const TOPIC = 'reloaded';
/** How long a TLS handshake may take before the check fails. */
const HANDSHAKE_TIMEOUT_MS = 5_000;

let directory: string;
let keystorePath: string;
let certificatesA: TestCertificates;
let certificatesB: TestCertificates;
let broker: SecureBroker;
let bootstrap: string;
/** A kafkajs producer connected before the reload, trusting CA A only. */
let producerBefore: Producer;
/** A TLS connection opened before the reload. */
let socketBefore: TLSSocket;

describeClient('kcat', missingCommand('kcat', 'kcat'))('SIGHUP: a new certificate for new connections', () => {
  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'ferry-reload-'));
    keystorePath = join(directory, 'keystore.pem');
    certificatesA = makeCertificates(join(directory, 'a'), []);
    certificatesB = makeCertificates(join(directory, 'b'), []);
    copyFileSync(certificatesA.serverPemPath, keystorePath);
    broker = await SecureBroker.start({
      label: 'reload',
      listeners: [{ name: 'SSL', protocol: 'SSL' }],
      properties: { 'ssl.keystore.type': 'PEM', 'ssl.keystore.location': keystorePath },
    });
    bootstrap = broker.bootstrap('SSL');
    producerBefore = kafkajsClient(bootstrap, { tls: { certificates: certificatesA } }).producer();
    await producerBefore.connect();
    await producerBefore.send({ topic: TOPIC, acks: -1, messages: [{ value: 'before the reload', partition: 0 }] });
    socketBefore = await tlsConnect([certificatesA.caPath]);
  });

  afterAll(async () => {
    await producerBefore?.disconnect();
    socketBefore?.destroy();
    await broker?.stop();
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  });

  test('before the reload, a new connection is served certificate A', async () => {
    expect(fingerprintOf(socketBefore)).toBe(fingerprintOfFile(certificatesA.serverCertPath));
  });

  test('after the keystore file is replaced and kill -HUP, a new connection is served certificate B', async () => {
    const replacement = `${keystorePath}.new`;
    copyFileSync(certificatesB.serverPemPath, replacement);
    renameSync(replacement, keystorePath); // as a deploy would: the broker never reads half a file
    await broker.hangUp();
    const socket = await tlsConnect([certificatesA.caPath, certificatesB.caPath]);
    try {
      expect(fingerprintOf(socket)).toBe(fingerprintOfFile(certificatesB.serverCertPath));
    } finally {
      socket.destroy();
    }
  });

  test('a new client that trusts only CA A is refused now (it no longer verifies the broker); one that trusts CA B produces and consumes', async () => {
    const refused = await kafkajsProduceRefused(kafkajsClient(bootstrap, { tls: { certificates: certificatesA } }, { retries: 0 }), TOPIC, 'trusting the old CA');
    expect(refused).toMatch(/certificate|verify/i);
    expect((await kcatProduce(bootstrap, kcatSsl(certificatesB), TOPIC, ['kcat after the reload'])).exitCode).toBe(0);
  });

  test('connections opened before the reload keep working: the old producer writes again, the old TLS socket still has certificate A', async () => {
    await producerBefore.send({ topic: TOPIC, acks: -1, messages: [{ value: 'after the reload, old connection', partition: 0 }] });
    expect(socketBefore.destroyed).toBe(false);
    expect(fingerprintOf(socketBefore)).toBe(fingerprintOfFile(certificatesA.serverCertPath));
    expect(await kcatConsume(bootstrap, kcatSsl(certificatesB), TOPIC)).toEqual(['before the reload', 'kcat after the reload', 'after the reload, old connection']);
  });
});

/** A TLS connection to the listener trusting `caPaths`, resolved once the handshake verified the broker. */
function tlsConnect(caPaths: readonly string[]): Promise<TLSSocket> {
  const [host, port] = bootstrap.split(':') as [string, string];
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port: Number(port), ca: caPaths.map((path) => readFileSync(path, 'utf8')) });
    const timer = setTimeout(() => reject(new Error(`no TLS handshake with ${bootstrap} after ${HANDSHAKE_TIMEOUT_MS} ms`)), HANDSHAKE_TIMEOUT_MS);
    socket.once('secureConnect', () => {
      clearTimeout(timer);
      resolve(socket);
    });
    socket.once('error', (error) => {
      clearTimeout(timer);
      reject(error);
    });
  });
}

function fingerprintOf(socket: TLSSocket): string {
  const certificate = socket.getPeerX509Certificate();
  if (certificate === undefined) throw new Error('the broker presented no certificate');
  return certificate.fingerprint256;
}

function fingerprintOfFile(path: string): string {
  return new X509Certificate(readFileSync(path)).fingerprint256;
}
