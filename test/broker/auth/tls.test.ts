// TLS listeners over real sockets (docs/security.md, listeners): ssl.client.auth required,
// requested and none; a certificate the CA signed, none, another CA's, a revoked one (the CRL);
// the principal a certificate gets through ssl.principal.mapping.rules (Kafka's RULE: syntax on
// the RFC 2253 name, most significant RDN first: O=Ferry,OU=test,CN=alice), seen through the
// authorizer's decisions (super.users) and its denial log; SASL over TLS.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSOptions } from 'bun';
import type { ListenerConfig } from '../../../src/broker/auth/listener-config.ts';
import type { Broker } from '../../../src/broker/broker.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { describeAclsRequestSchema, describeAclsResponseSchema } from '../../../src/protocol/messages/describe-acls.ts';
import { PlainSaslClient } from '../../../src/security/sasl/plain.ts';
import { DEFAULT_TLS_SETTINGS, type TlsSettings } from '../../../src/security/tls/tls-settings.ts';
import { clientPrincipalName, makeCertificates, type TestCertificates } from '../../support/certificates.ts';
import { authenticationCount, type SecureBroker, startSecureBroker, stopBrokers } from './brokers.ts';
import { authenticateFramed, call, frames, nextId, readAnswer, requestBytes, type WireClient, wireClient } from './wire.ts';

/** Kafka's ANY in DescribeAcls filters. */
const ANY = 1;
setDefaultTimeout(30_000);
const UPPER_CN_RULE = 'RULE:^O=Ferry,OU=test,CN=(.*?)$/$1/U';
const running: Broker[] = [];
const clients: WireClient[] = [];
const directory = mkdtempSync(join(tmpdir(), 'ferry-auth-tls-'));
let certificates: TestCertificates;
let secure: SecureBroker;

function tlsListener(name: string, settings: Partial<TlsSettings>, protocol: 'SSL' | 'SASL_SSL' = 'SSL'): ListenerConfig {
  return {
    name,
    protocol,
    host: '127.0.0.1',
    port: 0,
    tls: { ...DEFAULT_TLS_SETTINGS, keystoreLocation: certificates.serverPemPath, truststoreLocation: certificates.caPath, ...settings },
    ...(protocol === 'SASL_SSL' ? { sasl: { mechanisms: ['PLAIN'], plainUsers: () => new Map([['alice', 'alice-secret']]) } } : {}),
  };
}

/** A client certificate with a subject in the usual order (C first, CN last in the certificate): RFC 2253 puts CN first, as Kafka's documented rules expect. */
const SERVICE_SUBJECT = '/C=US/ST=CA/L=San Francisco/O=Acme, Inc./OU=ServiceUsers/CN=Svc-Ingest';

function signServiceCertificate(): void {
  const run = (...args: string[]) => expect(Bun.spawnSync(['openssl', ...args], { cwd: directory, stderr: 'pipe' }).exitCode).toBe(0);
  run('genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-out', 'service.key');
  run('req', '-new', '-key', 'service.key', '-out', 'service.csr', '-subj', SERVICE_SUBJECT);
  run(
    'x509',
    '-req',
    '-in',
    'service.csr',
    '-CA',
    certificates.caPath,
    '-CAkey',
    join(directory, 'ca.key'),
    '-CAcreateserial',
    '-out',
    'service.pem',
    '-days',
    '2',
    '-extfile',
    join(directory, 'client.ext'),
  );
}

beforeAll(async () => {
  certificates = makeCertificates(directory, ['alice', 'bob']);
  signServiceCertificate();
  secure = await startSecureBroker(
    {
      listeners: [
        tlsListener('REQUIRED', { clientAuth: 'required', crlLocation: certificates.crlPath, principalMappingRules: UPPER_CN_RULE }),
        tlsListener('DEFAULTDN', { clientAuth: 'required' }),
        tlsListener('REQUESTED', { clientAuth: 'requested', crlLocation: certificates.crlPath, principalMappingRules: 'RULE:^O=Ferry,OU=test,CN=(.*?)$/$1-requested/L' }),
        tlsListener('NOMATCH', { clientAuth: 'required', principalMappingRules: 'RULE:^O=Ferry,OU=test,CN=(alice)$/$1/' }),
        tlsListener('SASLSSL', {}, 'SASL_SSL'),
        // Kafka's documented example (docs: ssl.principal.mapping.rules), then DEFAULT
        tlsListener('KAFKARULES', { clientAuth: 'required', principalMappingRules: 'RULE:^CN=(.*?),OU=ServiceUsers.*$/$1/L,DEFAULT' }),
      ],
      // super users: alice as the REQUIRED listener maps her; bob by his whole name (DEFAULT rules)
      security: { authorizer: { superUsers: ['User:ALICE', `User:${clientPrincipalName('bob')}`, 'User:alice-requested', 'User:svc-ingest'] }, failedAuthenticationDelayMs: 0 },
    },
    running,
  );
});

afterAll(async () => {
  for (const client of clients) client.end();
  await stopBrokers(running);
  rmSync(directory, { recursive: true, force: true });
});

/** The client's TLS: trusts the test CA, presents `who`'s certificate (a client name, the untrusted one, or none). */
function clientTls(who: string | 'untrusted' | 'service' | null): TLSOptions {
  const service = { keyPath: join(directory, 'service.key'), certPath: join(directory, 'service.pem') };
  const files = who === null ? null : who === 'untrusted' ? certificates.untrusted : who === 'service' ? service : certificates.client(who);
  return {
    ca: readFileSync(certificates.caPath, 'utf8'),
    rejectUnauthorized: true,
    ...(files === null ? {} : { cert: readFileSync(files.certPath, 'utf8'), key: readFileSync(files.keyPath, 'utf8') }),
  };
}

async function connect(listener: string, who: string | 'untrusted' | null): Promise<WireClient> {
  const client = await wireClient(secure.port(listener), clientTls(who));
  clients.push(client);
  return client;
}

/** DescribeAcls (DESCRIBE on the cluster): NONE for a super user, CLUSTER_AUTHORIZATION_FAILED for anyone else; null if closed. */
async function describeAclsError(client: WireClient): Promise<number | null> {
  const answer = await call(
    client,
    requestBytes(describeAclsRequestSchema, 1, nextId(), {
      resourceTypeFilter: ANY,
      resourceNameFilter: null,
      patternTypeFilter: ANY,
      principalFilter: null,
      hostFilter: null,
      operation: ANY,
      permissionType: ANY,
    }),
  );
  return answer === null ? null : readAnswer(describeAclsResponseSchema, 1, answer).body.errorCode;
}

function deniedLogged(principal: string): boolean {
  return secure.logs.some((line) => line.startsWith(`authorization: User:${principal} from 127.0.0.1 denied DESCRIBE on CLUSTER:`));
}

describe('ssl.client.auth=required', () => {
  test('a certificate the CA signed: the principal is its DN through the rules (ALICE is a super user, BOB is not)', async () => {
    const before = authenticationCount(secure.broker, { listener: 'REQUIRED', mechanism: 'SSL', result: 'succeeded' });
    expect(await describeAclsError(await connect('REQUIRED', 'alice'))).toBe(ErrorCode.NONE);
    expect(await describeAclsError(await connect('REQUIRED', 'bob'))).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    expect(deniedLogged('BOB')).toBe(true);
    expect(authenticationCount(secure.broker, { listener: 'REQUIRED', mechanism: 'SSL', result: 'succeeded' })).toBe(before + 2);
  });

  test("Kafka's documented rule on a certificate in the usual order: CN=Svc-Ingest,OU=ServiceUsers,O=Acme\\, Inc.,... maps to svc-ingest; DEFAULT after it keeps other names whole", async () => {
    expect(await describeAclsError(await connect('KAFKARULES', 'service'))).toBe(ErrorCode.NONE);
    expect(await describeAclsError(await connect('KAFKARULES', 'alice'))).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    expect(deniedLogged(clientPrincipalName('alice'))).toBe(true);
  });

  test('DEFAULT rules: the whole RFC 2253 name', async () => {
    expect(await describeAclsError(await connect('DEFAULTDN', 'bob'))).toBe(ErrorCode.NONE);
    expect(await describeAclsError(await connect('DEFAULTDN', 'alice'))).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    expect(deniedLogged(clientPrincipalName('alice'))).toBe(true);
  });

  for (const [who, what] of [
    [null, 'no certificate'],
    ['untrusted', "another CA's certificate"],
    ['revoked', 'a revoked certificate (the CRL)'],
  ] as const) {
    test(`${what}: closed at the handshake, nothing answered`, async () => {
      const failed = () => authenticationCount(secure.broker, { listener: 'REQUIRED', mechanism: 'SSL', result: 'failed' });
      const before = failed();
      const client = await connect('REQUIRED', who);
      client.send(frames.apiVersions(nextId()));
      expect(await client.waitClosed()).toBe(true);
      expect(client.frames).toHaveLength(0);
      // A certificate that did not verify is refused by the channel (counted); a missing one fails the handshake itself in BoringSSL (not counted).
      expect(failed()).toBe(who === null ? before : before + 1);
    });
  }

  test("a request sent the moment the client's handshake completes is never answered for a certificate that does not verify, and carries a good one's principal (50 and 30 tries)", async () => {
    for (const who of ['untrusted', 'revoked']) {
      const tries = await Promise.all(
        Array.from({ length: 50 }, async () => {
          const client = await connect('REQUIRED', who);
          client.send(frames.apiVersions(nextId())); // queued until the handshake, written at once then
          await client.waitClosed();
          return client.frames.length;
        }),
      );
      expect(tries.every((answered) => answered === 0)).toBe(true);
    }
    // and a good certificate's first request already carries its principal, never ANONYMOUS
    const first = await Promise.all(Array.from({ length: 30 }, async () => describeAclsError(await connect('REQUIRED', 'alice'))));
    expect(first.every((errorCode) => errorCode === ErrorCode.NONE)).toBe(true);
  });

  test('the revoked certificate is refused because of the CRL: a listener without one takes it', async () => {
    expect(await describeAclsError(await connect('DEFAULTDN', 'revoked'))).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    expect(deniedLogged(clientPrincipalName('revoked'))).toBe(true);
  });

  test('a name no rule maps: the connection is refused, counted as a failed SSL authentication', async () => {
    const before = authenticationCount(secure.broker, { listener: 'NOMATCH', mechanism: 'SSL', result: 'failed' });
    expect(await describeAclsError(await connect('NOMATCH', 'alice'))).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED); // mapped to alice: not a super user
    const bob = await connect('NOMATCH', 'bob');
    bob.send(frames.apiVersions(nextId()));
    expect(await bob.waitClosed()).toBe(true);
    expect(bob.frames).toHaveLength(0);
    expect(authenticationCount(secure.broker, { listener: 'NOMATCH', mechanism: 'SSL', result: 'failed' })).toBe(before + 1);
    expect(secure.logs.some((line) => line.includes(`no ssl.principal.mapping.rules rule applies to ${clientPrincipalName('bob')}`))).toBe(true);
  });
});

describe('ssl.client.auth=requested', () => {
  test('without a certificate: ANONYMOUS', async () => {
    expect(await describeAclsError(await connect('REQUESTED', null))).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    expect(deniedLogged('ANONYMOUS')).toBe(true);
  });

  test('with a good certificate: its mapped name (lower case, per the rule)', async () => {
    expect(await describeAclsError(await connect('REQUESTED', 'alice'))).toBe(ErrorCode.NONE);
    expect(await describeAclsError(await connect('REQUESTED', 'bob'))).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED);
    expect(deniedLogged('bob-requested')).toBe(true);
  });

  test('with a certificate that does not verify (revoked, untrusted): closed, not ANONYMOUS', async () => {
    for (const who of ['revoked', 'untrusted']) {
      const client = await connect('REQUESTED', who);
      client.send(frames.apiVersions(nextId()));
      expect(await client.waitClosed()).toBe(true);
      expect(client.frames).toHaveLength(0);
    }
  });
});

test('SASL_SSL: PLAIN over TLS, the principal from SASL', async () => {
  const client = await connect('SASLSSL', null);
  await authenticateFramed(client, new PlainSaslClient('alice', 'alice-secret'));
  expect(await describeAclsError(client)).toBe(ErrorCode.CLUSTER_AUTHORIZATION_FAILED); // User:alice, not ALICE
  expect(deniedLogged('alice')).toBe(true);
});
