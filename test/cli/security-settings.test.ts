// `ferry broker --config server.properties`: Kafka's security keys read into listeners and the
// broker's security options (src/cli/security-settings.ts), in every form Kafka takes them
// (listener.name.<l>. and listener.name.<l>.<mechanism>. prefixes, sasl.jaas.config inline and a
// JAAS file, OAUTHBEARER's JWKS or unsecured validator, the authorizer, the inter-broker listener
// by name and by protocol, per-IP overrides); and every refusal is one line naming the key.
import { describe, expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { ListenerConfig } from '../../src/broker/auth/listener-config.ts';
import { CliError } from '../../src/cli/args.ts';
import { type BrokerConfig, resolveBrokerConfig, type ResolvedBrokerConfig } from '../../src/cli/broker-config.ts';
import { tempDir } from '../support/temp-dir.ts';

const PLAIN_MODULE = 'org.apache.kafka.common.security.plain.PlainLoginModule';
const SCRAM_MODULE = 'org.apache.kafka.common.security.scram.ScramLoginModule';
const OAUTH_MODULE = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerLoginModule';
const UNSECURED_HANDLER = 'org.apache.kafka.common.security.oauthbearer.internals.unsecured.OAuthBearerUnsecuredValidatorCallbackHandler';
const JWKS_HANDLER = 'org.apache.kafka.common.security.oauthbearer.OAuthBearerValidatorCallbackHandler';
const STANDARD_AUTHORIZER = 'org.apache.kafka.metadata.authorizer.StandardAuthorizer';

function file(name: string, text: string, dir = tempDir()): string {
  const path = join(dir, name);
  writeFileSync(path, text);
  return path;
}

function resolve(lines: readonly string[]): ResolvedBrokerConfig {
  return resolveBrokerConfig({ flags: { config: file('server.properties', `${lines.join('\n')}\n`) }, env: {} });
}

function config(lines: readonly string[]): BrokerConfig & { listeners: readonly ListenerConfig[] | null } {
  return resolve(lines).config as BrokerConfig & { listeners: readonly ListenerConfig[] | null };
}

function listener(broker: { listeners: readonly ListenerConfig[] | null }, name: string): ListenerConfig {
  const found = broker.listeners?.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no listener ${name}`);
  return found;
}

/** The one line a config stops the start with (exit code 2), the file's path replaced by FILE. */
function refusal(lines: readonly string[]): string {
  try {
    resolve(lines);
  } catch (error) {
    expect(error).toBeInstanceOf(CliError);
    expect((error as CliError).exitCode).toBe(2);
    expect((error as CliError).message).not.toContain('\n');
    return (error as CliError).message.replace(/config \S+server\.properties/g, 'config FILE');
  }
  throw new Error(`accepted: ${lines.join(' | ')}`);
}

const jaas = (module: string, options: string) => `${module} required ${options};`;
/** Three listeners of three protocols, PEM keystore for the TLS ones. */
const THREE_LISTENERS = [
  'listeners=CLIENT://127.0.0.1:9092,INTERNAL://127.0.0.1:9093,SECURE://127.0.0.1:9094',
  'listener.security.protocol.map=CLIENT:SASL_PLAINTEXT,INTERNAL:SASL_SSL,SECURE:SSL',
  'ssl.keystore.type=PEM',
  'ssl.keystore.location=/etc/ferry/server.pem',
  'ssl.truststore.location=/etc/ferry/ca.pem',
];

describe('accepted forms', () => {
  test('every listener with its protocol; listener.name.<l>. wins over the plain key; listener.name.<l>.<mechanism>. over both', () => {
    const broker = config([
      ...THREE_LISTENERS,
      'listener.name.internal.ssl.keystore.location=/etc/ferry/internal.pem',
      'listener.name.secure.ssl.client.auth=required',
      'listener.name.secure.ssl.principal.mapping.rules=RULE:^CN=(.*?),OU=.*$/$1/L,DEFAULT',
      'listener.name.secure.ferry.ssl.crl.location=/etc/ferry/crl.pem',
      'ssl.enabled.protocols=TLSv1.3',
      'sasl.enabled.mechanisms=PLAIN',
      'listener.name.client.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512',
      `sasl.jaas.config=${jaas(PLAIN_MODULE, 'username="broker" password="b" user_broker="b"')}`,
      `listener.name.client.plain.sasl.jaas.config=${jaas(PLAIN_MODULE, 'user_alice="alice-secret" user_bob="bob-secret"')}`,
      'connections.max.reauth.ms=3600000',
      'listener.name.client.scram-sha-256.connections.max.reauth.ms=60000',
      'listener.name.client.sasl.server.max.receive.size=8192',
      'inter.broker.listener.name=SECURE',
    ]);
    expect(broker.listeners!.map((each) => [each.name, each.protocol, each.host, each.port])).toEqual([
      ['CLIENT', 'SASL_PLAINTEXT', '127.0.0.1', 9092],
      ['INTERNAL', 'SASL_SSL', '127.0.0.1', 9093],
      ['SECURE', 'SSL', '127.0.0.1', 9094],
    ]);
    const client = listener(broker, 'CLIENT');
    expect(client.tls).toBeUndefined();
    expect(client.sasl!.mechanisms).toEqual(['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512']);
    expect(client.sasl!.reauthMs).toEqual(
      new Map([
        ['PLAIN', 3_600_000],
        ['SCRAM-SHA-256', 60_000],
        ['SCRAM-SHA-512', 3_600_000],
      ]),
    );
    expect(client.sasl!.receiveBytesMax).toBe(8192);
    expect(client.sasl!.plainUsers!()).toEqual(
      new Map([
        ['alice', 'alice-secret'],
        ['bob', 'bob-secret'],
      ]),
    );
    const internal = listener(broker, 'INTERNAL');
    expect(internal.tls!.keystoreLocation).toBe('/etc/ferry/internal.pem');
    expect(internal.tls!.clientAuth).toBe('none');
    expect(internal.sasl!.mechanisms).toEqual(['PLAIN']);
    expect(internal.sasl!.plainUsers!()).toEqual(new Map([['broker', 'b']]));
    expect(internal.sasl!.receiveBytesMax).toBeUndefined(); // Kafka's default (512 KiB) applies
    const secure = listener(broker, 'SECURE');
    expect(secure.sasl).toBeUndefined();
    expect(secure.tls).toMatchObject({
      keystoreLocation: '/etc/ferry/server.pem',
      truststoreLocation: '/etc/ferry/ca.pem',
      crlLocation: '/etc/ferry/crl.pem',
      clientAuth: 'required',
      enabledProtocols: ['TLSv1.3'],
      principalMappingRules: 'RULE:^CN=(.*?),OU=.*$/$1/L,DEFAULT',
    });
  });

  test("PEM keystore as text (ssl.keystore.key and ssl.keystore.certificate.chain), truststore as text, an encrypted key's password", () => {
    const secure = listener(
      config([
        'listeners=SSL://127.0.0.1:9093',
        'ssl.keystore.key=-----BEGIN ENCRYPTED PRIVATE KEY-----',
        'ssl.keystore.certificate.chain=-----BEGIN CERTIFICATE-----',
        'ssl.key.password=open-sesame',
        'ssl.truststore.certificates=-----BEGIN CERTIFICATE-----',
        'ssl.cipher.suites=ECDHE-ECDSA-AES128-GCM-SHA256',
      ]),
      'SSL',
    );
    expect(secure.tls).toMatchObject({
      keystoreLocation: null,
      keystoreKey: '-----BEGIN ENCRYPTED PRIVATE KEY-----',
      keystoreCertificateChain: '-----BEGIN CERTIFICATE-----',
      keyPassword: 'open-sesame',
      truststoreCertificates: '-----BEGIN CERTIFICATE-----',
      cipherSuites: 'ECDHE-ECDSA-AES128-GCM-SHA256',
    });
  });

  test('a JAAS file (ferry.sasl.jaas.file): the <listener>.KafkaServer section over KafkaServer; PLAIN users read again on each reload', () => {
    const dir = tempDir();
    const jaasPath = file(
      'kafka_server_jaas.conf',
      [`KafkaServer { ${jaas(PLAIN_MODULE, 'username="broker" password="b" user_broker="b"')} };`, `client.KafkaServer { ${jaas(PLAIN_MODULE, 'user_alice="first"')} };`].join('\n'),
      dir,
    );
    const broker = config([
      'listeners=CLIENT://127.0.0.1:9092,INTERNAL://127.0.0.1:9093',
      'listener.security.protocol.map=CLIENT:SASL_PLAINTEXT,INTERNAL:SASL_PLAINTEXT',
      'sasl.enabled.mechanisms=PLAIN',
      `ferry.sasl.jaas.file=${jaasPath}`,
      'inter.broker.listener.name=INTERNAL',
    ]);
    const client = listener(broker, 'CLIENT').sasl!;
    expect(client.plainUsers!()).toEqual(new Map([['alice', 'first']]));
    expect(listener(broker, 'INTERNAL').sasl!.plainUsers!()).toEqual(new Map([['broker', 'b']]));
    expect(broker.security.interBroker?.sasl).toEqual({ mechanism: 'PLAIN', username: 'broker', password: 'b' }); // the KafkaServer section's own login
    writeFileSync(jaasPath, `client.KafkaServer { ${jaas(PLAIN_MODULE, 'user_alice="second" user_carol="c"')} };\nKafkaServer { ${jaas(PLAIN_MODULE, 'user_broker="b"')} };\n`);
    expect(client.plainUsers!()).toEqual(
      new Map([
        ['alice', 'second'],
        ['carol', 'c'],
      ]),
    );
  });

  test('OAUTHBEARER: the JWKS validator with its audience, issuer and claims; the unsecured one only when named, with its JAAS options', () => {
    const broker = config([
      'listeners=JWT://127.0.0.1:9092,DEV://127.0.0.1:9093,PLAINTEXT://127.0.0.1:9094',
      'listener.security.protocol.map=JWT:SASL_PLAINTEXT,DEV:SASL_PLAINTEXT,PLAINTEXT:PLAINTEXT',
      'sasl.enabled.mechanisms=OAUTHBEARER',
      'listener.name.jwt.oauthbearer.sasl.oauthbearer.jwks.endpoint.url=file:///etc/ferry/jwks.json',
      `listener.name.jwt.oauthbearer.sasl.server.callback.handler.class=${JWKS_HANDLER}`,
      'listener.name.jwt.oauthbearer.sasl.oauthbearer.expected.audience=kafka,ferry',
      'listener.name.jwt.oauthbearer.sasl.oauthbearer.expected.issuer=https://idp.example',
      'listener.name.jwt.oauthbearer.sasl.oauthbearer.sub.claim.name=client_id',
      'sasl.oauthbearer.clock.skew.seconds=10',
      `listener.name.dev.oauthbearer.sasl.server.callback.handler.class=${UNSECURED_HANDLER}`,
      `listener.name.dev.oauthbearer.sasl.jaas.config=${jaas(OAUTH_MODULE, 'unsecuredValidatorPrincipalClaimName="name" unsecuredValidatorRequiredScope="read write" unsecuredValidatorAllowableClockSkewMs="500"')}`,
    ]);
    expect(listener(broker, 'JWT').sasl!.oauthBearer).toEqual({
      mode: 'jwks',
      jwksEndpointUrl: 'file:///etc/ferry/jwks.json',
      expectedAudience: ['kafka', 'ferry'],
      expectedIssuer: 'https://idp.example',
      subClaimName: 'client_id',
      clockSkewSeconds: 10,
    });
    expect(listener(broker, 'DEV').sasl!.oauthBearer).toEqual({ mode: 'unsecured', principalClaimName: 'name', requiredScope: ['read', 'write'], allowableClockSkewMs: 500 });
  });

  test('the authorizer: StandardAuthorizer (or AclAuthorizer), super.users, allow.everyone.if.no.acl.found', () => {
    expect(config([`authorizer.class.name=${STANDARD_AUTHORIZER}`, 'super.users=User:admin;User:CN=broker,O=Ferry', 'allow.everyone.if.no.acl.found=true']).security.authorizer).toEqual({
      superUsers: ['User:admin', 'User:CN=broker,O=Ferry'],
      allowEveryoneIfNoAclFound: true,
    });
    expect(config(['authorizer.class.name=kafka.security.authorizer.AclAuthorizer']).security.authorizer).toEqual({ superUsers: [], allowEveryoneIfNoAclFound: false });
    expect(config(['num.partitions=1']).security.authorizer).toBeUndefined();
  });

  test('the inter-broker listener by name: its TLS, and SASL as the JAAS username and password of sasl.mechanism.inter.broker.protocol', () => {
    const broker = config([
      ...THREE_LISTENERS,
      'inter.broker.listener.name=INTERNAL',
      'listener.name.internal.sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-512',
      'sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512',
      `listener.name.internal.plain.sasl.jaas.config=${jaas(PLAIN_MODULE, 'user_alice="a"')}`,
      `listener.name.internal.scram-sha-512.sasl.jaas.config=${jaas(SCRAM_MODULE, 'username="ferry-broker" password="broker-secret"')}`,
      'listener.name.client.sasl.enabled.mechanisms=SCRAM-SHA-256',
    ]);
    expect(broker.security.interBroker).toEqual({
      listener: 'INTERNAL',
      tls: listener(broker, 'INTERNAL').tls!,
      sasl: { mechanism: 'SCRAM-SHA-512', username: 'ferry-broker', password: 'broker-secret' },
    });
  });

  test('the inter-broker listener by protocol (security.inter.broker.protocol names the listener of that name), and the defaults', () => {
    const byProtocol = config(['listeners=PLAINTEXT://127.0.0.1:9092,SSL://127.0.0.1:9093', 'ssl.keystore.location=/etc/ferry/server.pem', 'security.inter.broker.protocol=SSL']);
    expect(byProtocol.security.interBroker).toMatchObject({ listener: 'SSL', sasl: null, tls: { keystoreLocation: '/etc/ferry/server.pem' } });
    // neither key: PLAINTEXT if there is one (Kafka's default security.inter.broker.protocol), else the first
    expect(config(['listeners=SSL://127.0.0.1:9093,PLAINTEXT://127.0.0.1:9092', 'ssl.keystore.location=/k.pem']).security.interBroker).toMatchObject({ listener: 'PLAINTEXT', tls: null, sasl: null });
    expect(config(['listeners=B://127.0.0.1:9093,A://127.0.0.1:9092', 'listener.security.protocol.map=A:PLAINTEXT,B:PLAINTEXT']).security.interBroker).toMatchObject({ listener: 'B' });
    // a single SASL mechanism needs no sasl.mechanism.inter.broker.protocol
    expect(
      config([
        'listeners=SASL_SSL://127.0.0.1:9093',
        'ssl.keystore.location=/k.pem',
        'sasl.enabled.mechanisms=PLAIN',
        `sasl.jaas.config=${jaas(PLAIN_MODULE, 'username="b" password="p" user_b="p"')}`,
        'security.inter.broker.protocol=SASL_SSL',
      ]).security.interBroker?.sasl,
    ).toEqual({ mechanism: 'PLAIN', username: 'b', password: 'p' });
  });

  test('limits: max.connections.per.ip, its overrides (IPv6 in brackets or not, a host name), connection.failed.authentication.delay.ms', () => {
    const broker = config(['max.connections.per.ip=10', 'max.connections.per.ip.overrides=127.0.0.1:2, [::1]:0,::2:3,broker.example:5', 'connection.failed.authentication.delay.ms=250']);
    expect(broker.security).toEqual({
      maxConnectionsPerIp: 10,
      maxConnectionsPerIpOverrides: new Map([
        ['127.0.0.1', 2],
        ['::1', 0],
        ['::2', 3],
        ['broker.example', 5],
      ]),
      failedAuthenticationDelayMs: 250,
    });
  });

  test('keys Ferry has no use for (Java key managers, keystore passwords of PEM files, Kerberos, client login) are named in the warning line', () => {
    const { warnings } = resolve([
      'listeners=SSL://127.0.0.1:9093',
      'ssl.keystore.location=/k.pem',
      'ssl.keystore.password=x',
      'listener.name.ssl.ssl.truststore.password=y',
      'ssl.keymanager.algorithm=SunX509',
      'sasl.kerberos.service.name=kafka',
      'sasl.login.refresh.window.factor=0.8',
    ]);
    expect(warnings).toEqual([
      'ferry: ignoring Kafka settings Ferry has no use for: ssl.keystore.password, listener.name.ssl.ssl.truststore.password, ssl.keymanager.algorithm, sasl.kerberos.service.name, sasl.login.refresh.window.factor',
    ]);
  });
});

describe('refusals: one line naming the key', () => {
  const sslListener = ['listeners=SSL://127.0.0.1:9093', 'ssl.keystore.location=/k.pem'];
  const saslListener = ['listeners=SASL_PLAINTEXT://127.0.0.1:9092'];
  const plain = `sasl.jaas.config=${jaas(PLAIN_MODULE, 'user_alice="a"')}`;
  /** PLAIN users and the broker's own login (the listener is the inter-broker one by default). */
  const plainWithLogin = `sasl.jaas.config=${jaas(PLAIN_MODULE, 'username="alice" password="a" user_alice="a"')}`;

  const cases: [string, readonly string[], string | RegExp][] = [
    [
      'a JKS keystore',
      [...sslListener, 'ssl.keystore.type=JKS'],
      "config FILE: ssl.keystore.type must be PEM (Ferry reads PEM files: convert a JKS or PKCS12 store with keytool -importkeystore and openssl pkcs12), got 'JKS'",
    ],
    ['a PKCS12 truststore for one listener', [...sslListener, 'listener.name.ssl.ssl.truststore.type=PKCS12'], /^config FILE: listener\.name\.ssl\.ssl\.truststore\.type must be PEM .* got 'PKCS12'$/],
    ['ssl.client.auth neither none, requested nor required', [...sslListener, 'ssl.client.auth=sometimes'], "config FILE: ssl.client.auth must be one of none, requested, required, got 'sometimes'"],
    ['an old TLS version', [...sslListener, 'ssl.enabled.protocols=TLSv1.1'], 'config FILE: ssl.enabled.protocols: TLSv1.1 is not one Ferry speaks (TLSv1.2, TLSv1.3)'],
    ['ssl.protocol SSLv3', [...sslListener, 'ssl.protocol=SSLv3'], "config FILE: ssl.protocol must be TLS, TLSv1.2 or TLSv1.3, got 'SSLv3'"],
    ['no hostname verification', [...sslListener, 'ssl.endpoint.identification.algorithm='], /^config FILE: ssl\.endpoint\.identification\.algorithm must be https/],
    ['a pluggable SSL engine', [...sslListener, 'ssl.engine.factory.class=com.example.Engine'], /^config FILE: ssl\.engine\.factory\.class: Ferry has no pluggable SSL engines/],
    [
      "a SASL listener without mechanisms (Kafka's default GSSAPI)",
      saslListener,
      /^config: sasl\.enabled\.mechanisms: listener SASL_PLAINTEXT uses SASL: list its mechanisms .*Ferry has no GSSAPI\)$/,
    ],
    ['GSSAPI', [...saslListener, 'sasl.enabled.mechanisms=GSSAPI'], 'config FILE: sasl.enabled.mechanisms: GSSAPI is not a mechanism Ferry serves (PLAIN, SCRAM-SHA-256, SCRAM-SHA-512, OAUTHBEARER)'],
    [
      'PLAIN without a JAAS config',
      [...saslListener, 'sasl.enabled.mechanisms=PLAIN'],
      /^config: listener SASL_PLAINTEXT enables PLAIN: give listener\.name\.sasl_plaintext\.plain\.sasl\.jaas\.config/,
    ],
    [
      'PLAIN with no user_ entries',
      [...saslListener, 'sasl.enabled.mechanisms=PLAIN', `sasl.jaas.config=${jaas(PLAIN_MODULE, 'username="b" password="p"')}`],
      /^config FILE: sasl\.jaas\.config: PLAIN on listener SASL_PLAINTEXT has no users/,
    ],
    [
      'a JAAS config that does not parse',
      [...saslListener, 'sasl.enabled.mechanisms=PLAIN', 'listener.name.sasl_plaintext.plain.sasl.jaas.config=PlainLoginModule required user_a="x"'],
      /^config FILE: listener\.name\.sasl_plaintext\.plain\.sasl\.jaas\.config: /,
    ],
    [
      'a JAAS file that cannot be read',
      [...saslListener, 'sasl.enabled.mechanisms=PLAIN', 'ferry.sasl.jaas.file=/nonexistent/jaas.conf'],
      'config FILE: ferry.sasl.jaas.file: /nonexistent/jaas.conf cannot be read (ENOENT)',
    ],
    [
      'OAUTHBEARER without a JWKS file',
      [...saslListener, 'sasl.enabled.mechanisms=OAUTHBEARER'],
      /^config: sasl\.oauthbearer\.jwks\.endpoint\.url: OAUTHBEARER on listener SASL_PLAINTEXT needs a JWKS file/,
    ],
    [
      'an OAUTHBEARER validator Ferry does not have',
      [...saslListener, 'sasl.enabled.mechanisms=OAUTHBEARER', 'listener.name.sasl_plaintext.oauthbearer.sasl.server.callback.handler.class=com.example.Validator'],
      /^config FILE: listener\.name\.sasl_plaintext\.oauthbearer\.sasl\.server\.callback\.handler\.class must be /,
    ],
    [
      'a negative connections.max.reauth.ms',
      [...saslListener, 'sasl.enabled.mechanisms=PLAIN', plain, 'connections.max.reauth.ms=-1'],
      'config FILE: connections.max.reauth.ms must be at least 0, got -1',
    ],
    [
      'sasl.server.max.receive.size 0',
      [...saslListener, 'sasl.enabled.mechanisms=PLAIN', plain, 'sasl.server.max.receive.size=0'],
      'config FILE: sasl.server.max.receive.size must be at least 1, got 0',
    ],
    ['a typo under ssl.', [...sslListener, 'ssl.keystore.locaton=/k.pem'], /^config FILE: ssl\.keystore\.locaton is not a setting any listener here uses/],
    ['an unknown key under sasl.', [...saslListener, 'sasl.enabled.mechanisms=PLAIN', plainWithLogin, 'sasl.made.up=1'], /^config FILE: sasl\.made\.up is not a setting any listener here uses/],
    [
      'an override for a listener that does not exist',
      [...sslListener, 'listener.name.nosuch.ssl.keystore.location=/k.pem'],
      /^config FILE: listener\.name\.nosuch\.ssl\.keystore\.location is not a setting any listener here uses/,
    ],
    [
      "a mechanism's key on a listener without that mechanism",
      [...saslListener, 'sasl.enabled.mechanisms=PLAIN', plainWithLogin, `listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=${jaas(SCRAM_MODULE, 'username="a" password="b"')}`],
      /^config FILE: listener\.name\.sasl_plaintext\.scram-sha-256\.sasl\.jaas\.config is not a setting any listener here uses/,
    ],
    ['SSL keys without an SSL listener', ['ssl.keystore.location=/k.pem'], /^config FILE: ssl\.keystore\.location is not a setting any listener here uses/],
    ['an inter-broker listener that does not exist', [...sslListener, 'inter.broker.listener.name=INTERNAL'], 'config FILE: inter.broker.listener.name: no listener is named INTERNAL'],
    [
      'security.inter.broker.protocol without a listener of that name',
      [...sslListener, 'security.inter.broker.protocol=SASL_SSL'],
      'config FILE: security.inter.broker.protocol: no listener is named SASL_SSL',
    ],
    [
      'both inter-broker keys',
      [...sslListener, 'inter.broker.listener.name=SSL', 'security.inter.broker.protocol=SSL'],
      'config FILE: inter.broker.listener.name and security.inter.broker.protocol are both set (Kafka allows one)',
    ],
    ['an inter-broker listener without a listeners list', ['inter.broker.listener.name=INTERNAL'], 'config FILE: inter.broker.listener.name names a listener, but config FILE sets no listeners'],
    [
      'an inter-broker mechanism the listener does not enable',
      [...saslListener, 'sasl.enabled.mechanisms=PLAIN', plain, 'sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512'],
      'config FILE: sasl.mechanism.inter.broker.protocol: SCRAM-SHA-512 is not enabled on the inter-broker listener SASL_PLAINTEXT (PLAIN)',
    ],
    [
      'two mechanisms and no inter-broker mechanism',
      ['listeners=SASL_PLAINTEXT://127.0.0.1:9092', 'sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256', plain],
      'config: sasl.mechanism.inter.broker.protocol must say which of PLAIN, SCRAM-SHA-256 brokers authenticate to each other with',
    ],
    [
      'an OAUTHBEARER-only inter-broker listener (brokers log in with PLAIN or SCRAM)',
      [...saslListener, 'sasl.enabled.mechanisms=OAUTHBEARER', 'sasl.oauthbearer.jwks.endpoint.url=file:///jwks.json'],
      /^config: sasl\.mechanism\.inter\.broker\.protocol: OAUTHBEARER .*PLAIN, SCRAM-SHA-256 or SCRAM-SHA-512.*inter\.broker\.listener\.name/,
    ],
    [
      'an inter-broker login without username and password',
      [...saslListener, 'sasl.enabled.mechanisms=PLAIN', plain],
      /^config FILE: sasl\.jaas\.config: the inter-broker listener's PLAIN login module needs username and password/,
    ],
    ['another authorizer', ['authorizer.class.name=com.example.MyAuthorizer'], `config FILE: authorizer.class.name must be ${STANDARD_AUTHORIZER} (Kafka's ACLs), got 'com.example.MyAuthorizer'`],
    ['super.users without an authorizer', ['super.users=User:admin'], `config FILE: super.users needs an authorizer: set authorizer.class.name=${STANDARD_AUTHORIZER}`],
    [
      'allow.everyone.if.no.acl.found not a boolean',
      [`authorizer.class.name=${STANDARD_AUTHORIZER}`, 'allow.everyone.if.no.acl.found=maybe'],
      "config FILE: allow.everyone.if.no.acl.found must be true or false, got 'maybe'",
    ],
    ['a super user without a principal type', [`authorizer.class.name=${STANDARD_AUTHORIZER}`, 'super.users=admin'], /^config FILE: super\.users: /],
    ['a custom principal builder', ['principal.builder.class=com.example.Builder'], /^config FILE: principal\.builder\.class must be Kafka's default /],
    ['a per-IP override that is not address:count', ['max.connections.per.ip.overrides=127.0.0.1'], "config FILE: max.connections.per.ip.overrides: '127.0.0.1' is not address:count"],
    ['a negative per-IP override', ['max.connections.per.ip.overrides=127.0.0.1:-1'], 'config FILE: max.connections.per.ip.overrides: the count of 127.0.0.1 must not be negative'],
    ['a per-IP override that is not a number', ['max.connections.per.ip.overrides=127.0.0.1:many'], /^config FILE: max\.connections\.per\.ip\.overrides: the count of 127\.0\.0\.1/],
    ['a negative max.connections.per.ip', ['max.connections.per.ip=-1'], 'config FILE: max.connections.per.ip must be at least 0, got -1'],
  ];
  for (const [what, lines, expected] of cases) {
    test(what, () => {
      const message = refusal(lines);
      if (typeof expected === 'string') expect(message).toBe(expected);
      else expect(message).toMatch(expected);
    });
  }

  test('no refusal carries a password', () => {
    const secret = 'do-not-print-me';
    const messages = [
      refusal([...saslListener, 'sasl.enabled.mechanisms=PLAIN', `sasl.jaas.config=${PLAIN_MODULE} required user_a="${secret}"`]),
      refusal([...saslListener, 'sasl.enabled.mechanisms=PLAIN', `sasl.jaas.config=${jaas(PLAIN_MODULE, `user_a="${secret}"`)}`, 'sasl.mechanism.inter.broker.protocol=SCRAM-SHA-512']),
      refusal([...sslListener, `ssl.key.password=${secret}`, 'ssl.client.auth=bad']),
    ];
    for (const message of messages) expect(message).not.toContain(secret);
  });
});
