import { expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { FileStore } from '../../src/store/index.ts';
import { tempDir } from '../support/temp-dir.ts';
import { runOrFail } from '../package/run-command.ts';

const EXAMPLES = resolve(import.meta.dir, '../../examples');
/** A self-test opens one or two engines and moves a few dozen records over loopback (~1 s measured). */
const SELF_TEST_TIMEOUT_MS = 60_000;

test(
  'http-producer --self-test posts records, each answered once durable, and reads them back',
  async () => {
    const dataDir = tempDir();
    const { stdout } = await runOrFail([process.execPath, join(EXAMPLES, 'http-producer.ts'), '--self-test', '--data-dir', dataDir], EXAMPLES, SELF_TEST_TIMEOUT_MS);
    expect(stdout).toContain('self-test passed: 20 records posted, durable and read back, last offset 19');
    // Durable means in the object store: the WAL objects are there, in the file store under the data dir.
    const store = await FileStore.open(join(dataDir, 'objects'));
    expect((await store.list('wal/zone-a/')).objects.length).toBeGreaterThan(0);
    await store.close();
    // A second run reuses the topic and carries on after the first run's records.
    const again = await runOrFail([process.execPath, join(EXAMPLES, 'http-producer.ts'), '--self-test', '--data-dir', dataDir], EXAMPLES, SELF_TEST_TIMEOUT_MS);
    expect(again.stdout).toContain('last offset 39');
  },
  2 * SELF_TEST_TIMEOUT_MS,
);

test(
  'read-replica --self-test reads in zone b every record posted in zone a, through the shared store only',
  async () => {
    const root = tempDir();
    const { stdout } = await runOrFail([process.execPath, join(EXAMPLES, 'read-replica.ts'), '--self-test', '--data-dir', root], EXAMPLES, SELF_TEST_TIMEOUT_MS);
    expect(stdout).toContain('self-test passed: 50 records posted in zone a, all read from the replica in zone b');
    // The replica rebuilt the partition into its own log directory.
    expect(existsSync(join(root, 'zone-b', 'events-0'))).toBe(true);
  },
  SELF_TEST_TIMEOUT_MS,
);

/** How long a separate process may take to open its engine and print where it listens. */
const START_TIMEOUT_MS = 20_000;
const REPLICA_POLL_MS = 20;

/** Starts an example as its own process and resolves with the URL it prints once listening. */
async function startProcess(args: string[]): Promise<{ url: string; child: Bun.Subprocess<'ignore', 'pipe', 'inherit'> }> {
  const child = Bun.spawn([process.execPath, ...args], { cwd: EXAMPLES, stdin: 'ignore', stdout: 'pipe', stderr: 'inherit' });
  const reader = child.stdout.getReader();
  let printed = '';
  const deadline = Date.now() + START_TIMEOUT_MS;
  while (Date.now() < deadline) {
    const { value, done } = await reader.read();
    if (done) break;
    printed += new TextDecoder().decode(value);
    const url = /http:\/\/127\.0\.0\.1:\d+/.exec(printed)?.[0];
    if (url !== undefined) return { url, child };
  }
  child.kill();
  throw new Error(`${args[0]} did not say where it listens: ${printed}`);
}

test(
  'the producer and the replica as two processes (two zones) share nothing but the object store directory',
  async () => {
    const root = tempDir();
    const store = join(root, 'objects');
    const leader = await startProcess([join(EXAMPLES, 'http-producer.ts'), '--data-dir', join(root, 'zone-a'), '--store', store, '--port', '0']);
    const replica = await startProcess([join(EXAMPLES, 'read-replica.ts'), '--data-dir', join(root, 'zone-b'), '--store', store, '--port', '0']);
    try {
      const { offset } = (await (await fetch(`${leader.url}/records`, { method: 'POST', body: 'from zone a' })).json()) as { offset: number };
      expect(offset).toBe(0);
      let answer = await fetch(`${replica.url}/records/0`);
      for (const deadline = Date.now() + START_TIMEOUT_MS; answer.status === 404 && Date.now() < deadline; answer = await fetch(`${replica.url}/records/0`)) await Bun.sleep(REPLICA_POLL_MS);
      expect(await answer.text()).toBe('from zone a');
      expect((await fetch(`${replica.url}/records/1`)).status).toBe(404); // not written: nothing past the high watermark
    } finally {
      leader.child.kill('SIGTERM');
      replica.child.kill('SIGTERM');
      expect(await leader.child.exited).toBe(0); // a clean stop: the engine closed, the WAL flushed
      expect(await replica.child.exited).toBe(0);
    }
  },
  SELF_TEST_TIMEOUT_MS,
);
