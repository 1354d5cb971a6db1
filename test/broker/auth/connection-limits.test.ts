// max.connections.per.ip and max.connections.per.ip.overrides (docs/security.md [A6]) over real
// sockets: counted across every listener of the broker, per client address (127.0.0.2 is another
// client than 127.0.0.1), given back when a connection ends, also one refused at its TLS handshake.
import { afterEach, expect, setDefaultTimeout, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { connect as netConnect, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Broker } from '../../../src/broker/broker.ts';
import { PlainSaslClient } from '../../../src/security/sasl/plain.ts';
import { DEFAULT_TLS_SETTINGS } from '../../../src/security/tls/tls-settings.ts';
import { makeCertificates } from '../../support/certificates.ts';
import { until } from '../../support/until.ts';
import { PLAINTEXT_LISTENER_NAME, SASL_LISTENER, type SecureBroker, startSecureBroker, stopBrokers } from './brokers.ts';
import { answers, authenticateFramed, call, frames, nextId, type WireClient, wireClient } from './wire.ts';

setDefaultTimeout(30_000);

const running: Broker[] = [];
const clients: WireClient[] = [];
const sockets: Socket[] = [];

afterEach(async () => {
  for (const client of clients.splice(0)) client.end();
  for (const socket of sockets.splice(0)) socket.destroy();
  await stopBrokers(running);
});

async function connect(secure: SecureBroker, listener: string): Promise<WireClient> {
  const client = await wireClient(secure.port(listener));
  clients.push(client);
  return client;
}

/** Whether the connection is served: ApiVersions answered (allowed first on every listener). */
async function served(client: WireClient): Promise<boolean> {
  const answer = await call(client, frames.apiVersions(nextId()));
  return answer !== null && answers.apiVersions(answer).body.errorCode === 0;
}

function metric(secure: SecureBroker, series: string): number {
  const line = secure.broker.metrics
    .renderPrometheus()
    .split('\n')
    .find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? 0 : Number(line.slice(series.length + 1));
}

const refusedPerIp = (secure: SecureBroker, listener: string): number => metric(secure, `ferry_broker_connections_refused_per_ip_total{listener="${listener}"}`);

/** A TCP connection from `localAddress` (another loopback address is another client); resolves with whether ApiVersions was answered. */
async function servedFrom(secure: SecureBroker, localAddress: string): Promise<boolean> {
  const socket = netConnect({ host: '127.0.0.1', port: secure.port(PLAINTEXT_LISTENER_NAME), localAddress });
  sockets.push(socket);
  const answered = new Promise<boolean>((resolve) => {
    socket.once('data', () => resolve(true));
    socket.once('close', () => resolve(false));
    socket.once('error', () => resolve(false));
  });
  socket.once('connect', () => {
    const body = frames.apiVersions(nextId());
    const prefix = Buffer.alloc(4);
    prefix.writeInt32BE(body.length);
    socket.write(Buffer.concat([prefix, body]));
  });
  return answered;
}

test('max.connections.per.ip counts across listeners; the next connection from the address is closed on arrival and counted; a slot comes back when one ends', async () => {
  const secure = await startSecureBroker({ security: { maxConnectionsPerIp: 3 } }, running);
  const first = await connect(secure, SASL_LISTENER);
  await authenticateFramed(first, new PlainSaslClient('alice', 'alice-secret'));
  const second = await connect(secure, SASL_LISTENER);
  const third = await connect(secure, PLAINTEXT_LISTENER_NAME);
  expect(await served(second)).toBe(true);
  expect(await served(third)).toBe(true);

  const fourth = await connect(secure, PLAINTEXT_LISTENER_NAME);
  expect(await fourth.waitClosed()).toBe(true);
  expect(fourth.frames).toHaveLength(0);
  const fifth = await connect(secure, SASL_LISTENER);
  expect(await fifth.waitClosed()).toBe(true);
  expect(refusedPerIp(secure, PLAINTEXT_LISTENER_NAME)).toBe(1);
  expect(refusedPerIp(secure, SASL_LISTENER)).toBe(1);
  expect(secure.logs.filter((line) => line.startsWith('max.connections.per.ip reached for 127.0.0.1'))).toHaveLength(2); // once per spell and listener

  third.end();
  expect(await third.waitClosed()).toBe(true);
  let sixth: WireClient | null = null;
  // the broker sees the close a moment after the client: retry until a slot is free
  for (let attempt = 0; attempt < 50; attempt++) {
    const candidate = await connect(secure, PLAINTEXT_LISTENER_NAME);
    if (await served(candidate)) {
      sixth = candidate;
      break;
    }
    await Bun.sleep(20);
  }
  expect(sixth).not.toBeNull();
  expect(await served(first)).toBe(true); // the authenticated connection was never disturbed
});

test('max.connections.per.ip.overrides: 127.0.0.1 held to 1, 0 refuses 127.0.0.2 entirely, 127.0.0.3 takes the default', async () => {
  const secure = await startSecureBroker(
    {
      security: {
        maxConnectionsPerIp: 2,
        maxConnectionsPerIpOverrides: new Map([
          ['127.0.0.1', 1],
          ['127.0.0.2', 0],
        ]),
      },
    },
    running,
  );
  const only = await connect(secure, PLAINTEXT_LISTENER_NAME);
  expect(await served(only)).toBe(true);
  const refused = await connect(secure, PLAINTEXT_LISTENER_NAME);
  expect(await refused.waitClosed()).toBe(true);

  expect(await servedFrom(secure, '127.0.0.2')).toBe(false);
  expect(await servedFrom(secure, '127.0.0.3')).toBe(true);
  expect(await servedFrom(secure, '127.0.0.3')).toBe(true);
  expect(await servedFrom(secure, '127.0.0.3')).toBe(false); // the default, 2
});

test('max.connections.per.ip.overrides by host name: localhost holds 127.0.0.1 to its bound; a name that does not resolve stops the start', async () => {
  const secure = await startSecureBroker({ security: { maxConnectionsPerIpOverrides: new Map([['localhost', 1]]) } }, running);
  expect(await served(await connect(secure, PLAINTEXT_LISTENER_NAME))).toBe(true);
  expect(await (await connect(secure, PLAINTEXT_LISTENER_NAME)).waitClosed()).toBe(true);
  await expect(startSecureBroker({ security: { maxConnectionsPerIpOverrides: new Map([['no-such-host.invalid', 1]]) } }, running)).rejects.toThrow(
    /max.connections.per.ip.overrides: host no-such-host.invalid does not resolve/,
  );
});

test('connections refused at the TLS handshake give their slot back', async () => {
  const directory = mkdtempSync(join(tmpdir(), 'ferry-auth-limits-'));
  try {
    const certificates = makeCertificates(directory, ['alice']);
    const secure = await startSecureBroker(
      {
        listeners: [
          {
            name: 'MTLS',
            protocol: 'SSL',
            host: '127.0.0.1',
            port: 0,
            tls: { ...DEFAULT_TLS_SETTINGS, keystoreLocation: certificates.serverPemPath, truststoreLocation: certificates.caPath, crlLocation: certificates.crlPath, clientAuth: 'required' },
          },
        ],
        security: { maxConnectionsPerIp: 2 },
      },
      running,
    );
    const tls = (who: string | null) => ({
      ca: readFileSync(certificates.caPath, 'utf8'),
      ...(who === null ? {} : { cert: readFileSync(certificates.client(who).certPath, 'utf8'), key: readFileSync(certificates.client(who).keyPath, 'utf8') }),
    });
    for (let i = 0; i < 6; i++) {
      const refused = await wireClient(secure.port('MTLS'), tls(i % 2 === 0 ? certificates.revokedName : null));
      clients.push(refused);
      refused.send(frames.apiVersions(nextId()));
      expect(await refused.waitClosed()).toBe(true);
    }
    await until(() => metric(secure, 'ferry_broker_connections{listener="MTLS"}') === 0, 'the refused connections to be closed on the broker', 10_000);
    for (let i = 0; i < 2; i++) {
      const good = await wireClient(secure.port('MTLS'), tls('alice'));
      clients.push(good);
      expect(await served(good)).toBe(true);
    }
  } finally {
    rmSync(directory, { recursive: true, force: true });
  }
});
