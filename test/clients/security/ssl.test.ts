// kcat and kafkajs over SSL listeners of one `ferry broker --config server.properties`: server
// authentication only (listener SSL), and mutual TLS (listener MTLS: ssl.client.auth=required, a
// CRL): a certificate the CA signed works; none, another CA's or a revoked one is refused, and
// nothing a refused client sent reaches the topic.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeCertificates, type TestCertificates } from '../../support/certificates.ts';
import { SecureBroker } from '../../support/secure-broker.ts';
import { describeClient, missingCommand } from '../support/tools.ts';
import { AuthMatrix } from './support/auth-matrix.ts';
import { kafkajsClient, kafkajsConsume, kafkajsMetadata, kafkajsProduce, kafkajsProduceRefused } from './support/kafkajs-clients.ts';
import { kcat, kcatConsume, kcatProduce, kcatProduceRefused, kcatRefusal, kcatSsl, KCAT_METADATA_TIMEOUT_S } from './support/kcat.ts';
import { refusalTest } from './support/refusals.ts';

setDefaultTimeout(30_000);

/** Where refused clients try to write; only the authorized writes may be in it. */
const GUARDED = 'mtls-guarded';
const AUTHORIZED_LINES = ["authorized by alice's certificate"];
/** Bun's TLS server completes the handshake of a certificate it did not verify; Ferry then closes the connection without a TLS alert. */
const NO_ALERT = "the handshake completes and the connection closes without a TLS alert (Bun's TLS server does not abort it), so the client sees a disconnect";

const matrix = new AuthMatrix('SSL and mTLS listeners');
let directory: string;
let certificates: TestCertificates;
let broker: SecureBroker;
let ssl: string;
let mtls: string;

describeClient('kcat', missingCommand('kcat', 'kcat'))('SSL listeners: kcat and kafkajs', () => {
  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'ferry-ssl-certs-'));
    certificates = makeCertificates(directory, ['alice']);
    broker = await SecureBroker.start({
      label: 'ssl',
      listeners: [
        { name: 'SSL', protocol: 'SSL' },
        { name: 'MTLS', protocol: 'SSL' },
      ],
      properties: {
        'ssl.keystore.type': 'PEM',
        'ssl.keystore.location': certificates.serverPemPath,
        'ssl.truststore.type': 'PEM',
        'ssl.truststore.location': certificates.caPath,
        'listener.name.mtls.ssl.client.auth': 'required',
        'listener.name.mtls.ferry.ssl.crl.location': certificates.crlPath,
      },
    });
    ssl = broker.bootstrap('SSL');
    mtls = broker.bootstrap('MTLS');
  });

  afterAll(async () => {
    console.log(matrix.summary());
    await broker?.stop();
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  });

  describe('kcat (librdkafka 2.0.2) over SSL', () => {
    test('server authentication only: produces with acks=all, consumes back, metadata names the SSL listener', async () => {
      const settings = kcatSsl(certificates);
      const lines = ['ssl one', 'ssl two', 'ssl three'];
      expect((await kcatProduce(ssl, settings, 'kcat-ssl', lines)).exitCode).toBe(0);
      expect(await kcatConsume(ssl, settings, 'kcat-ssl')).toEqual(lines);
      const metadata = await kcat(ssl, settings, ['-L', '-t', 'kcat-ssl', '-m', String(KCAT_METADATA_TIMEOUT_S)]);
      expect(metadata.stdout).toContain(`broker 1 at ${ssl}`);
      expect(metadata.stdout).toContain('topic "kcat-ssl" with 1 partitions');
    });

    test('mTLS with a certificate the CA signed: produces, consumes back, metadata names the MTLS listener', async () => {
      const settings = kcatSsl(certificates, certificates.client('alice'));
      expect((await kcatProduce(mtls, settings, GUARDED, AUTHORIZED_LINES)).exitCode).toBe(0);
      expect(await kcatConsume(mtls, settings, GUARDED)).toEqual(AUTHORIZED_LINES);
      const metadata = await kcat(mtls, settings, ['-L', '-m', String(KCAT_METADATA_TIMEOUT_S)]);
      expect(metadata.stdout).toContain(`broker 1 at ${mtls}`);
    });
  });

  describe('kafkajs 2.2.4 over SSL', () => {
    test('server authentication only: produces with acks=all, consumes back in a group, metadata names the SSL listener', async () => {
      const kafka = kafkajsClient(ssl, { tls: { certificates } });
      const values = ['kafkajs ssl 1', 'kafkajs ssl 2'];
      expect(await kafkajsProduce(kafka, 'kafkajs-ssl', values)).toEqual(['0']);
      expect(await kafkajsConsume(kafka, 'kafkajs-ssl', 'kafkajs-ssl-readers', values.length)).toEqual(values);
      const metadata = await kafkajsMetadata(kafka, 'kafkajs-ssl');
      expect(metadata.brokers).toEqual([ssl]);
      expect(metadata.partitions).toBe(1);
    });

    test('mTLS with a certificate the CA signed: produces, consumes back, metadata names the MTLS listener', async () => {
      const kafka = kafkajsClient(mtls, { tls: { certificates, client: certificates.client('alice') } });
      const values = ['kafkajs mtls 1'];
      expect(await kafkajsProduce(kafka, 'kafkajs-mtls', values)).toEqual(['0']);
      expect(await kafkajsConsume(kafka, 'kafkajs-mtls', 'kafkajs-mtls-readers', values.length)).toEqual(values);
      expect((await kafkajsMetadata(kafka)).brokers).toEqual([mtls]);
    });
  });

  describe('mTLS refusals (ssl.client.auth=required)', () => {
    const clients = () => ({ none: undefined, untrusted: certificates.untrusted, revoked: certificates.client(certificates.revokedName) });
    const scenarios = [
      { key: 'none', scenario: 'no client certificate', kcat: /alert certificate required/, kafkajs: /CERTIFICATE_REQUIRED/, expectedText: 'TLS alert certificate required', difference: undefined },
      {
        key: 'untrusted',
        scenario: 'a certificate signed by an untrusted CA',
        kcat: /alert (certificate unknown|bad certificate|unknown ca)/,
        kafkajs: /CERTIFICATE_UNKNOWN|BAD_CERTIFICATE|UNKNOWN_CA/,
        expectedText: 'TLS alert certificate unknown (handshake failed)',
        difference: NO_ALERT,
      },
      {
        key: 'revoked',
        scenario: 'a revoked certificate (ferry.ssl.crl.location)',
        kcat: /alert (certificate revoked|certificate unknown|bad certificate)/,
        kafkajs: /CERTIFICATE_REVOKED|CERTIFICATE_UNKNOWN|BAD_CERTIFICATE/,
        expectedText: 'TLS alert certificate revoked/unknown (handshake failed)',
        difference: NO_ALERT,
      },
    ] as const;
    for (const scenario of scenarios) {
      refusalTest(matrix, {
        client: 'kcat',
        scenario: scenario.scenario,
        expected: scenario.kcat,
        expectedText: scenario.expectedText,
        ...(scenario.difference === undefined ? {} : { difference: scenario.difference }),
        attempt: async () => {
          const result = await kcatProduceRefused(mtls, kcatSsl(certificates, clients()[scenario.key]), GUARDED, `intruder: ${scenario.key}`);
          return { refused: result.exitCode !== 0, observed: kcatRefusal(result.stderr) };
        },
      });
      refusalTest(matrix, {
        client: 'kafkajs',
        scenario: scenario.scenario,
        expected: scenario.kafkajs,
        expectedText: scenario.expectedText,
        ...(scenario.difference === undefined ? {} : { difference: scenario.difference }),
        attempt: async () => {
          const client = clients()[scenario.key];
          const kafka = kafkajsClient(mtls, { tls: { certificates, ...(client === undefined ? {} : { client }) } }, { retries: 0 });
          const observed = await kafkajsProduceRefused(kafka, GUARDED, `intruder: kafkajs ${scenario.key}`);
          return { refused: observed !== 'written', observed };
        },
      });
    }

    test('nothing a refused client sent reached the topic: an authorized reader sees only the authorized writes', async () => {
      expect(await kcatConsume(mtls, kcatSsl(certificates, certificates.client('alice')), GUARDED)).toEqual(AUTHORIZED_LINES);
    });
  });
});
