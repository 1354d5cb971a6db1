// kcat, kafkajs and confluent-kafka-python over SASL_SSL listeners of one `ferry broker --config
// server.properties`, with each mechanism: PLAIN (JAAS users), SCRAM-SHA-256 and SCRAM-SHA-512
// (`ferry users add`), OAUTHBEARER with JWTs checked against a JWKS file (listener SASL_SSL) and
// with librdkafka's unsigned tokens (listener UNSECURED, Kafka's unsecured validator); then the
// refusal matrix, every refused client trying to write to one topic that must hold only what
// authorized clients wrote.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { SASLOptions } from 'kafkajs';
import { makeCertificates, type TestCertificates } from '../../support/certificates.ts';
import { JwtIssuer } from '../../support/jwt-issuer.ts';
import { SecureBroker } from '../../support/secure-broker.ts';
import { SuiteReport } from '../support/suite-report.ts';
import { DEBIAN_PYTHON, describeClient, missingCommand, missingPythonModule } from '../support/tools.ts';
import { AuthMatrix } from './support/auth-matrix.ts';
import { kafkajsClient, kafkajsConsume, kafkajsMetadata, kafkajsProduce, kafkajsProduceRefused } from './support/kafkajs-clients.ts';
import { kcat, kcatConsume, kcatProduce, kcatProduceRefused, kcatRefusal, kcatSasl, kcatSsl, kcatUnsecuredOAuth, KCAT_METADATA_TIMEOUT_S } from './support/kcat.ts';
import { refusalTest } from './support/refusals.ts';

setDefaultTimeout(30_000);

const PLAIN_PASSWORD = 'alice-plain-secret';
const SCRAM_PASSWORD = 'alice-scram-secret';
const AUDIENCE = 'ferry';
const ISSUER = 'https://issuer.ferry.test';
const GUARDED = 'sasl-guarded';
const AUTHORIZED_LINES = ['written by alice over PLAIN'];
const PYTHON_SUITE = `${import.meta.dir}/python/oauth_cb_suite.py`;
const PYTHON_TIMEOUT_MS = 60_000;
const UNSECURED_VALIDATOR = 'org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredValidatorCallbackHandler';
/**
 * kafkajs never reads OAUTHBEARER's error challenge: it takes the exchange for done and sends its
 * next request (Metadata), which the broker answers with that request's error response
 * (ILLEGAL_SASL_STATE) before closing, as Kafka's SaslServerAuthenticator.handleSaslToken does.
 */
/** What Kafka's OAUTHBEARER refusal says in its error challenge (OAuthBearerSaslServer), as librdkafka prints it. */
const INVALID_TOKEN = /SASL authentication error: \{"status":"invalid_token"\}/;

/** Refused OAUTHBEARER tokens by name, and the scenario each stands for. */
const TOKEN_SCENARIOS: Readonly<Record<string, string>> = {
  expired: 'OAUTHBEARER expired token',
  audience: 'OAUTHBEARER token for another audience',
  issuer: 'OAUTHBEARER token from another issuer',
  unknownKey: 'OAUTHBEARER token signed by an unknown key (same kid)',
};

const matrix = new AuthMatrix('SASL_SSL listeners (PLAIN, SCRAM, OAUTHBEARER)');
let directory: string;
const missing = missingCommand('kcat', 'kcat');
let certificates: TestCertificates;
let issuer: JwtIssuer;
let broker: SecureBroker;
let sasl: string;
let unsecured: string;
let ssl: string;

const SCRAM_KAFKAJS = { 'SCRAM-SHA-256': 'scram-sha-256', 'SCRAM-SHA-512': 'scram-sha-512' } as const;
const kafkajsSasl = (mechanism: 'PLAIN' | 'SCRAM-SHA-256' | 'SCRAM-SHA-512', username: string, password: string): SASLOptions =>
  mechanism === 'PLAIN' ? { mechanism: 'plain', username, password } : { mechanism: SCRAM_KAFKAJS[mechanism], username, password };
const oauthBearer = (token: () => Promise<string>): SASLOptions => ({ mechanism: 'oauthbearer', oauthBearerProvider: async () => ({ value: await token() }) });

describeClient('kcat', missing)('SASL_SSL listeners: kcat, kafkajs, confluent-kafka', () => {
  beforeAll(async () => {
    directory = mkdtempSync(join(tmpdir(), 'ferry-sasl-certs-'));
    certificates = makeCertificates(directory, ['alice']);
    issuer = await JwtIssuer.create(directory, { claims: { aud: AUDIENCE, iss: ISSUER } });
    broker = await SecureBroker.start({
      label: 'sasl',
      listeners: [
        { name: 'SASL_SSL', protocol: 'SASL_SSL' },
        { name: 'UNSECURED', protocol: 'SASL_SSL' },
        { name: 'SSL', protocol: 'SSL' },
      ],
      properties: {
        'inter.broker.listener.name': 'SSL',
        'ssl.keystore.type': 'PEM',
        'ssl.keystore.location': certificates.serverPemPath,
        'listener.name.sasl_ssl.sasl.enabled.mechanisms': 'PLAIN,SCRAM-SHA-256,SCRAM-SHA-512,OAUTHBEARER',
        'listener.name.sasl_ssl.plain.sasl.jaas.config': `org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="${PLAIN_PASSWORD}";`,
        'listener.name.sasl_ssl.oauthbearer.sasl.oauthbearer.jwks.endpoint.url': issuer.jwksUrl,
        'listener.name.sasl_ssl.oauthbearer.sasl.oauthbearer.expected.audience': AUDIENCE,
        'listener.name.sasl_ssl.oauthbearer.sasl.oauthbearer.expected.issuer': ISSUER,
        'listener.name.unsecured.sasl.enabled.mechanisms': 'OAUTHBEARER',
        'listener.name.unsecured.oauthbearer.sasl.server.callback.handler.class': UNSECURED_VALIDATOR,
      },
      scramUsers: { alice: SCRAM_PASSWORD },
    });
    sasl = broker.bootstrap('SASL_SSL');
    unsecured = broker.bootstrap('UNSECURED');
    ssl = broker.bootstrap('SSL');
    expect((await kcatProduce(sasl, kcatSasl(certificates, 'PLAIN', 'alice', PLAIN_PASSWORD), GUARDED, AUTHORIZED_LINES)).exitCode).toBe(0);
  });

  afterAll(async () => {
    console.log(matrix.summary());
    await broker?.stop();
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  });

  describe('kcat (librdkafka 2.0.2)', () => {
    for (const mechanism of ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] as const) {
      test(`${mechanism}: produces with acks=all, consumes back, metadata names the SASL_SSL listener`, async () => {
        const settings = kcatSasl(certificates, mechanism, 'alice', mechanism === 'PLAIN' ? PLAIN_PASSWORD : SCRAM_PASSWORD);
        const topic = `kcat-${mechanism.toLowerCase()}`;
        const lines = [`${mechanism} one`, `${mechanism} two`];
        expect((await kcatProduce(sasl, settings, topic, lines)).exitCode).toBe(0);
        expect(await kcatConsume(sasl, settings, topic)).toEqual(lines);
        const metadata = await kcat(sasl, settings, ['-L', '-t', topic, '-m', String(KCAT_METADATA_TIMEOUT_S)]);
        expect(metadata.stdout).toContain(`broker 1 at ${sasl}`);
        expect(metadata.stdout).toContain(`topic "${topic}" with 1 partitions`);
      });
    }

    test("OAUTHBEARER with unsigned tokens, against the listener configured with Kafka's unsecured validator: produces, consumes back, metadata", async () => {
      const settings = kcatUnsecuredOAuth(certificates, 'alice');
      const lines = ['unsecured one'];
      expect((await kcatProduce(unsecured, settings, 'kcat-unsecured', lines)).exitCode).toBe(0);
      expect(await kcatConsume(unsecured, settings, 'kcat-unsecured')).toEqual(lines);
      expect((await kcat(unsecured, settings, ['-L', '-m', String(KCAT_METADATA_TIMEOUT_S)])).stdout).toContain(`broker 1 at ${unsecured}`);
    });
  });

  describe('kafkajs 2.2.4', () => {
    for (const mechanism of ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] as const) {
      test(`${mechanism}: produces with acks=all, consumes back in a group, metadata names the SASL_SSL listener`, async () => {
        const kafka = kafkajsClient(sasl, { tls: { certificates }, sasl: kafkajsSasl(mechanism, 'alice', mechanism === 'PLAIN' ? PLAIN_PASSWORD : SCRAM_PASSWORD) });
        await expectRoundTrip(kafka, `kafkajs-${mechanism.toLowerCase()}`);
      });
    }

    test("OAUTHBEARER with a JWT the JWKS file's key signed (audience and issuer as expected): produces, consumes back, metadata", async () => {
      const kafka = kafkajsClient(sasl, { tls: { certificates }, sasl: oauthBearer(() => issuer.sign({ sub: 'alice' })) });
      await expectRoundTrip(kafka, 'kafkajs-oauthbearer');
    });
  });

  describeClient('confluent-kafka', missingPythonModule('confluent_kafka', 'python3-confluent-kafka'))('confluent-kafka-python 1.7.0 with oauth_cb', () => {
    let report: SuiteReport;
    beforeAll(async () => {
      const tokens: Record<string, string> = { good: await issuer.sign({ sub: 'alice' }), ...(await refusedTokens()) };
      report = await SuiteReport.run([DEBIAN_PYTHON, PYTHON_SUITE, sasl, certificates.caPath, 'python-oauthbearer', GUARDED, JSON.stringify(tokens)], { timeoutMs: PYTHON_TIMEOUT_MS });
    }, PYTHON_TIMEOUT_MS + 10_000);

    test('OAUTHBEARER with a signed JWT from oauth_cb: produces with acks=all, reads metadata, consumes back', () => {
      const produced = report.data<{ offsets: (number | string)[]; undelivered: number; errors: string[] }>('oauth.produce');
      expect(produced).toEqual({ offsets: [0, 1], undelivered: 0, errors: [] });
      const metadata = report.data<{ brokers: string[]; topics: string[] }>('oauth.metadata');
      expect(metadata.brokers).toEqual([sasl]);
      expect(metadata.topics).toContain('python-oauthbearer');
      expect(report.data<{ values: string[] }>('oauth.consume').values).toEqual(['oauth_cb one', 'oauth_cb two']);
    });

    for (const [name, scenario] of Object.entries(TOKEN_SCENARIOS)) {
      refusalTest(matrix, {
        client: 'confluent-kafka',
        scenario,
        expected: INVALID_TOKEN,
        expectedText: 'SASL authentication error: {"status":"invalid_token"}',
        attempt: async () => {
          const { errors, delivered } = report.data<{ errors: string[]; delivered: unknown[] }>(`refused.${name}`);
          return { refused: delivered.length === 0 || typeof delivered[0] === 'string', observed: errors[0] ?? `no error; delivered ${JSON.stringify(delivered)}` };
        },
      });
    }
  });

  describe('refusals', () => {
    for (const mechanism of ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'] as const) {
      const kcatWords =
        mechanism === 'PLAIN' ? 'Authentication failed: Invalid username or password' : `Authentication failed during authentication due to invalid credentials with SASL mechanism ${mechanism}`;
      const kafkajsName = mechanism === 'PLAIN' ? 'PLAIN' : mechanism.replace('SCRAM-SHA-', 'SCRAM SHA');
      for (const [scenario, username, password] of [
        [`${mechanism} wrong password`, 'alice', 'wrong-password'],
        [`${mechanism} unknown user`, 'mallory', 'any-password'],
      ] as const) {
        refusalKcat(
          scenario,
          () => sasl,
          () => kcatSasl(certificates, mechanism, username, password),
          `SASL authentication error: ${kcatWords}`,
        );
        refusalKafkajs(
          scenario,
          () => sasl,
          () => ({ tls: { certificates }, sasl: kafkajsSasl(mechanism, username, password) }),
          `KafkaJSSASLAuthenticationError: SASL ${kafkajsName} authentication failed: ${kcatWords}`,
        );
      }
    }

    for (const [name, scenario] of Object.entries(TOKEN_SCENARIOS)) {
      refusalKafkajs(
        scenario,
        () => sasl,
        () => ({ tls: { certificates }, sasl: oauthBearer(async () => (await refusedTokens())[name]!) }),
        'KafkaJSProtocolError: Request is not valid given the current SASL state (its next request answered ILLEGAL_SASL_STATE)',
        /Request is not valid given the current SASL state/,
      );
    }

    refusalKcat(
      'OAUTHBEARER unsigned token against a JWKS listener',
      () => sasl,
      () => kcatUnsecuredOAuth(certificates, 'alice'),
      'SASL authentication error: {"status":"invalid_token"}',
      INVALID_TOKEN,
    );

    refusalKcat(
      'a mechanism the listener does not enable (PLAIN on an OAUTHBEARER-only listener)',
      () => unsecured,
      () => kcatSasl(certificates, 'PLAIN', 'alice', PLAIN_PASSWORD),
      "SASL PLAIN mechanism handshake failed: Broker: Unsupported SASL mechanism: broker's supported mechanisms: OAUTHBEARER",
      /Unsupported SASL mechanism: broker's supported mechanisms: OAUTHBEARER/,
    );
    refusalKafkajs(
      'a mechanism the listener does not enable (PLAIN on an OAUTHBEARER-only listener)',
      () => unsecured,
      () => ({ tls: { certificates }, sasl: kafkajsSasl('PLAIN', 'alice', PLAIN_PASSWORD) }),
      'KafkaJSProtocolError: The broker does not support the requested SASL mechanism',
      /does not support the requested SASL mechanism/,
    );

    const disconnected = 'Disconnected while requesting ApiVersion: might be caused by incorrect security.protocol configuration (connecting to a SSL listener?)';
    refusalKcat(
      'a PLAINTEXT client against the SASL_SSL port',
      () => sasl,
      () => [],
      disconnected,
      /Disconnected while requesting ApiVersion/,
    );
    refusalKafkajs(
      'a PLAINTEXT client against the SASL_SSL port',
      () => sasl,
      () => ({}),
      'KafkaJSConnectionError (connection reset or closed)',
      /Connection error|Closed connection/,
    );
    refusalKcat(
      'a SASL_PLAINTEXT client against the SSL port',
      () => ssl,
      () => ['security.protocol=sasl_plaintext', 'sasl.mechanisms=PLAIN', 'sasl.username=alice', `sasl.password=${PLAIN_PASSWORD}`],
      disconnected,
      /Disconnected while requesting ApiVersion/,
    );
    refusalKafkajs(
      'a SASL_PLAINTEXT client against the SSL port',
      () => ssl,
      () => ({ sasl: kafkajsSasl('PLAIN', 'alice', PLAIN_PASSWORD) }),
      'KafkaJSConnectionError (connection reset or closed)',
      /Connection error|Closed connection/,
    );

    test('nothing a refused client sent reached the topic: an authorized reader sees only the authorized writes', async () => {
      expect(await kcatConsume(sasl, kcatSasl(certificates, 'SCRAM-SHA-512', 'alice', SCRAM_PASSWORD), GUARDED)).toEqual(AUTHORIZED_LINES);
    });

    test('the SSL listener serves a client that speaks SSL (the refusals above are about the protocol, not the port)', async () => {
      const metadata = await kcat(ssl, kcatSsl(certificates), ['-L', '-m', String(KCAT_METADATA_TIMEOUT_S)]);
      expect(metadata.stdout).toContain(`broker 1 at ${ssl}`);
    });
  });
});

let refused: Promise<Record<string, string>> | null = null;
/** The refused tokens, made once: an expired one, another audience's, another issuer's, one signed by a key the JWKS does not hold. */
function refusedTokens(): Promise<Record<string, string>> {
  refused ??= (async () => {
    const stranger = await JwtIssuer.create(mkdtempSync(join(directory, 'stranger-')), { claims: { aud: AUDIENCE, iss: ISSUER } });
    const nowSeconds = Math.floor(Date.now() / 1000);
    return {
      expired: await issuer.sign({ sub: 'alice', iat: nowSeconds - 7200, exp: nowSeconds - 3600 }),
      audience: await issuer.sign({ sub: 'alice', aud: 'someone-else' }),
      issuer: await issuer.sign({ sub: 'alice', iss: 'https://other-issuer.test' }),
      unknownKey: await stranger.sign({ sub: 'alice' }),
    };
  })();
  return refused;
}

/** Produce acks=all, consume back in a group, metadata naming the listener the client came through. */
async function expectRoundTrip(kafka: ReturnType<typeof kafkajsClient>, topic: string): Promise<void> {
  const values = [`${topic} 1`, `${topic} 2`];
  expect(await kafkajsProduce(kafka, topic, values)).toEqual(['0']);
  expect(await kafkajsConsume(kafka, topic, `${topic}-readers`, values.length)).toEqual(values);
  const metadata = await kafkajsMetadata(kafka, topic);
  expect(metadata.brokers).toEqual([sasl]);
  expect(metadata.partitions).toBe(1);
}

function refusalKcat(scenario: string, bootstrap: () => string, settings: () => string[], expectedText: string, expected?: RegExp, difference?: string): void {
  refusalTest(matrix, {
    client: 'kcat',
    scenario,
    expectedText,
    expected: expected ?? new RegExp(escapeRegExp(expectedText)),
    ...(difference === undefined ? {} : { difference }),
    attempt: async () => {
      const result = await kcatProduceRefused(bootstrap(), settings(), GUARDED, `intruder: kcat ${scenario}`);
      return { refused: result.exitCode !== 0, observed: kcatRefusal(result.stderr) };
    },
  });
}

function refusalKafkajs(scenario: string, bootstrap: () => string, security: () => Parameters<typeof kafkajsClient>[1], expectedText: string, expected?: RegExp, difference?: string): void {
  refusalTest(matrix, {
    client: 'kafkajs',
    scenario,
    expectedText,
    expected: expected ?? new RegExp(escapeRegExp(expectedText)),
    ...(difference === undefined ? {} : { difference }),
    attempt: async () => {
      const observed = await kafkajsProduceRefused(kafkajsClient(bootstrap(), security(), { retries: 0 }), GUARDED, `intruder: kafkajs ${scenario}`);
      return { refused: observed !== 'written', observed };
    },
  });
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
