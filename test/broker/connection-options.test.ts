// The connection limits reach a user: max.connections from a config file (a JSON number),
// connections.max.idle.ms from the environment (FERRY_CONNECTIONS_MAX_IDLE_MS), and
// queued.max.request.bytes as a flag (checked against the largest request).
import { afterAll, expect, setDefaultTimeout, test } from 'bun:test';
import { join } from 'node:path';
import { BrokerProcess, killAll } from '../support/broker-process.ts';
import { tempDir } from '../support/temp-dir.ts';

setDefaultTimeout(120_000);
const brokers: BrokerProcess[] = [];
afterAll(() => killAll(brokers));

interface Client {
  closed: boolean;
  end(): void;
  write(bytes: Uint8Array): void;
}

async function connect(port: number): Promise<Client> {
  const client: Client = { closed: false, end: () => socket?.end(), write: (bytes) => void socket?.write(bytes) };
  // A broker over its connection cap may reset the connection before the handshake completes.
  const socket = await Bun.connect({ hostname: '127.0.0.1', port, socket: { data() {}, close: () => void (client.closed = true), error: () => void (client.closed = true) } }).catch(
    (error: { code?: string }) => {
      if (error.code !== 'ECONNRESET') throw error;
      client.closed = true;
      return null;
    },
  );
  return client;
}

/** Polls until `condition` holds (bounded; no timing is asserted). */
async function until(condition: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 3000 && !condition(); i++) await Bun.sleep(10);
  if (!condition()) throw new Error(`timed out waiting until ${what}`);
}

test('a config file sets max.connections, the environment connections.max.idle.ms', async () => {
  const data = tempDir();
  const config = join(data, 'broker.json');
  await Bun.write(config, JSON.stringify({ maxConnections: 2 }));
  const broker = new BrokerProcess({ nodeId: 1, data, args: ['--config', config, '--queued-max-request-bytes', String(200 * 1024 * 1024)], env: { FERRY_CONNECTIONS_MAX_IDLE_MS: '300' } });
  brokers.push(broker);
  await broker.start();
  const first = await connect(broker.port);
  const second = await connect(broker.port);
  const third = await connect(broker.port);
  await until(() => third.closed, 'the connection over maxConnections is closed');
  first.write(Uint8Array.of(0, 0, 0, 100, 0, 18)); // a truncated frame, then silence
  await until(() => first.closed && second.closed, 'idle connections are closed after FERRY_CONNECTIONS_MAX_IDLE_MS');
  const fourth = await connect(broker.port); // room again
  await Bun.sleep(50);
  expect(fourth.closed).toBe(false);
  fourth.end();
  expect(await broker.terminate()).toBe(0);
});

test('a queued.max.request.bytes below the largest request is refused in one line', async () => {
  const broker = new BrokerProcess({ nodeId: 1, data: tempDir(), args: ['--queued-max-request-bytes', '1000'] });
  brokers.push(broker);
  const failure = await broker.start().then(
    () => null,
    (error: Error) => error,
  );
  expect(failure?.message).toContain('exited (2)');
  expect(broker.output()).toContain('--queued-max-request-bytes must be at least the largest request');
});
