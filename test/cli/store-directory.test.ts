// A `file:` store whose directory does not exist is refused (issue 24): a typo in --wal-store or
// --cluster-store would otherwise start an empty store beside the real one, and with it a second,
// empty cluster. The default under the data directory is created as before, and --create-store
// (FERRY_CREATE_STORE, ferry.create.store) asks for a new one.
import { afterEach, expect, test } from 'bun:test';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { EXIT_USAGE } from '../../src/cli/failure.ts';
import { BrokerProcess, killAll } from '../support/broker-process.ts';
import { tempDir } from '../support/temp-dir.ts';

const CLI = `${import.meta.dir}/../../src/cli.ts`;
/** Flags that keep a broker off the default ports. */
const QUIET_BROKER = ['--listen', '127.0.0.1:0', '--metrics', 'off'];

const brokers: BrokerProcess[] = [];
afterEach(async () => {
  await killAll(brokers.splice(0));
});

/** Runs `ferry args`; expects exit 2 and one stderr line; returns it. */
async function refusal(args: readonly string[], env: Record<string, string> = {}): Promise<string> {
  const child = Bun.spawn([process.execPath, CLI, ...args], { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe', env: { ...process.env, FERRY_DEBUG: '', ...env } });
  const [stderr, exitCode] = await Promise.all([new Response(child.stderr).text(), child.exited]);
  expect({ exitCode, stderr }).toEqual({ exitCode: EXIT_USAGE, stderr: expect.stringMatching(/^ferry broker: [^\n]*\n$/) });
  return stderr.trimEnd();
}

test('a file: store under a directory that does not exist is refused in one line naming the setting and --create-store', async () => {
  const data = tempDir();
  const missing = join(data, 'objcets');
  expect(await refusal(['broker', '--data', data, ...QUIET_BROKER, '--wal-store', `file:${missing}`])).toBe(
    `ferry broker: --wal-store file:${missing}: the directory ${missing} does not exist; check the path (a new directory is a new, empty store), or give --create-store to create it`,
  );
  mkdirSync(join(data, 'objects'));
  const exists = `file://${join(data, 'objects')}`;
  expect(await refusal(['broker', '--data', data, ...QUIET_BROKER, '--wal-store', exists, '--cluster-store', `file://${missing}`])).toContain(`--cluster-store file://${missing}: the directory`);
  expect(await refusal(['broker', '--data', data, ...QUIET_BROKER, '--wal-store', exists, '--tier-store', `file:${missing}`])).toContain(`--tier-store file:${missing}: the directory`);
  expect(await refusal(['broker', '--data', data, ...QUIET_BROKER], { FERRY_CLUSTER_STORE: `file:${missing}` })).toContain(`FERRY_CLUSTER_STORE file:${missing}: the directory`);
  const config = join(data, 'server.properties');
  writeFileSync(config, `ferry.wal.store=file:${missing}\n`);
  expect(await refusal(['broker', '--data', data, ...QUIET_BROKER, '--config', config])).toContain(`ferry.wal.store file:${missing}: the directory`);
  expect(existsSync(missing)).toBe(false);
});

test('--create-store, FERRY_CREATE_STORE and ferry.create.store create it; the default under the data directory needs none', async () => {
  const root = tempDir();
  const byFlag = join(root, 'flag', 'objects');
  const byEnv = join(root, 'env', 'objects');
  const byKey = join(root, 'key', 'objects');
  const config = join(root, 'server.properties');
  writeFileSync(config, `ferry.create.store=true\nferry.cluster.store=file:${byKey}\n`);
  const started = [
    new BrokerProcess({ nodeId: 1, data: join(root, 'b1'), args: ['--wal-store', `file:${byFlag}`, '--create-store'] }),
    new BrokerProcess({ nodeId: 2, data: join(root, 'b2'), args: ['--wal-store', `file:${byEnv}`], env: { FERRY_CREATE_STORE: 'true' } }),
    new BrokerProcess({ nodeId: 3, data: join(root, 'b3'), args: ['--config', config, '--peer-port', 'off'] }),
    // The default store (file:<data>/objects), given explicitly or not.
    new BrokerProcess({ nodeId: 4, data: join(root, 'b4'), args: ['--wal-store', `file:${join(root, 'b4', 'objects')}`] }),
    new BrokerProcess({ nodeId: 5, data: join(root, 'b5') }),
  ];
  brokers.push(...started);
  await Promise.all(started.map((broker) => broker.start()));
  expect([byFlag, byEnv, byKey, join(root, 'b4', 'objects'), join(root, 'b5', 'objects')].map(existsSync)).toEqual([true, true, true, true, true]);
});
