// `ferry users add|list|remove` end to end: spawned processes, the password on standard input, the
// credentials in the broker's store (salted and hashed: the password is nowhere in it); then a
// `ferry broker` process over that store takes SCRAM logins from ScramSaslClient and kcat, and a
// removal made while it runs applies within its refresh. Refusals are one line on stderr.
import { afterAll, beforeAll, describe, expect, setDefaultTimeout, test } from 'bun:test';
import type { Subprocess } from 'bun';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freeLoopbackPort } from '../../bench/lib/child-processes.ts';
import { ScramSaslClient } from '../../src/security/sasl/scram-client.ts';
import { SCRAM_SHA_256, SCRAM_SHA_512 } from '../../src/security/scram/mechanism.ts';
import { authenticateFramed, wireClient } from '../broker/auth/wire.ts';
import { until } from '../support/until.ts';

setDefaultTimeout(60_000);

const CLI = join(import.meta.dir, '..', '..', 'src', 'cli.ts');
const ALICE_PASSWORD = 'alice pass: with spaces, "quotes" and é';
const BOB_PASSWORD = 'bob-password';
const directory = mkdtempSync(join(tmpdir(), 'ferry-users-'));
const data = join(directory, 'data');
let broker: Subprocess<'ignore', 'pipe', 'pipe'> | null = null;
let port = 0;

afterAll(async () => {
  broker?.kill('SIGTERM');
  await broker?.exited;
  rmSync(directory, { recursive: true, force: true });
});

interface Run {
  readonly exitCode: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** `ferry users ...` as a child process, `stdin` piped in. */
async function users(args: readonly string[], stdin = ''): Promise<Run> {
  const child = Bun.spawn([process.execPath, CLI, 'users', ...args], { stdin: new TextEncoder().encode(stdin), stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { exitCode, stdout, stderr };
}

/** Every file under `dir`, read as text. */
function allText(dir: string): string {
  return readdirSync(dir, { recursive: true, encoding: 'utf8' })
    .map((name) => join(dir, name))
    .filter((path) => statSync(path).isFile())
    .map((path) => readFileSync(path, 'utf8'))
    .join('\n');
}

async function scramLogin(mechanism: typeof SCRAM_SHA_256, user: string, password: string): Promise<'authenticated' | string> {
  const client = await wireClient(port);
  try {
    await authenticateFramed(client, new ScramSaslClient(mechanism, user, password));
    return 'authenticated';
  } catch (error) {
    return (error as Error).message;
  } finally {
    client.end();
  }
}

async function kcat(args: readonly string[], user: string, password: string, stdin?: string): Promise<Run> {
  const child = Bun.spawn(
    ['kcat', '-b', `127.0.0.1:${port}`, '-X', 'security.protocol=SASL_PLAINTEXT', '-X', 'sasl.mechanisms=SCRAM-SHA-512', '-X', `sasl.username=${user}`, '-X', `sasl.password=${password}`, ...args],
    {
      stdin: stdin === undefined ? 'ignore' : new TextEncoder().encode(stdin),
      stdout: 'pipe',
      stderr: 'pipe',
    },
  );
  const timer = setTimeout(() => child.kill(), 30_000);
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  clearTimeout(timer);
  return { exitCode, stdout, stderr };
}

describe('ferry users', () => {
  beforeAll(async () => {
    expect(await users(['add', 'alice', '--data', data], `${ALICE_PASSWORD}\nignored second line\n`)).toMatchObject({
      exitCode: 0,
      stdout: 'alice: SCRAM-SHA-256, SCRAM-SHA-512 set (4096 iterations)\n',
    });
    expect(await users(['add', 'bob', '--data', data, '--mechanism', 'scram-sha-512', '--iterations', '8192'], BOB_PASSWORD)).toMatchObject({
      exitCode: 0,
      stdout: 'bob: SCRAM-SHA-512 set (8192 iterations)\n',
    });
  });

  test('list: every user with its mechanisms and iterations, never a secret', async () => {
    const listed = await users(['list', '--data', data]);
    expect(listed).toEqual({ exitCode: 0, stdout: 'alice: SCRAM-SHA-256 (4096 iterations), SCRAM-SHA-512 (4096 iterations)\nbob: SCRAM-SHA-512 (8192 iterations)\n', stderr: '' });
  });

  test('the store holds no password (salted and hashed, as Kafka keeps them)', () => {
    const stored = allText(data);
    expect(stored).toContain('"storedKey"');
    expect(stored).not.toContain('alice pass');
    expect(stored).not.toContain(ALICE_PASSWORD);
    expect(stored).not.toContain(BOB_PASSWORD);
  });

  test('a --config file names the store as ferry broker would read it', async () => {
    const config = join(directory, 'users.properties');
    writeFileSync(config, `log.dirs=${data}\n`);
    expect((await users(['list', '--config', config])).stdout).toContain('bob: SCRAM-SHA-512 (8192 iterations)');
  });

  test('refusals: one line on stderr, exit code 2 for usage, 1 for what the store says', async () => {
    const refusals: [readonly string[], string, string, number][] = [
      [['add', 'carol', '--data', data], '', 'ferry users: no password on standard input: pipe it in (printf %s "$PASSWORD" | ferry users add NAME ...)\n', 2],
      [['add', '--data', data], 'x', 'ferry users: add needs a user name: ferry users add NAME\n', 2],
      [['add', 'carol', '--data', data, '--mechanism', 'SCRAM-SHA-1'], 'x', "ferry users: --mechanism must be SCRAM-SHA-256 or SCRAM-SHA-512, got 'SCRAM-SHA-1'\n", 2],
      [['add', 'carol', '--data', data, '--iterations', '100'], 'x', "ferry users: --iterations must be an integer in [4096, 16384], got '100'\n", 2],
      [['remove', 'nobody', '--data', data], '', "ferry users: user nobody has no SCRAM credentials; 'ferry users list' shows who has\n", 1],
      [['remove', 'bob', '--data', data, '--mechanism', 'SCRAM-SHA-256'], '', 'ferry users: user bob has no SCRAM-SHA-256 credential\n', 1],
      [['rename', 'bob', '--data', data], '', "ferry users: unknown action 'rename'; say add, remove or list\n", 2],
    ];
    for (const [args, stdin, stderr, exitCode] of refusals) {
      expect(await users(args, stdin)).toEqual({ exitCode, stdout: '', stderr });
    }
    expect((await users(['add', 'carol', '--data', data], `${'p'.repeat(1025)}\n`)).stderr).toBe('ferry users: the password is longer than 1024 characters; choose a shorter one\n');
    expect((await users(['list', '--data', data])).stdout).not.toContain('carol');
  });

  describe('a broker over that store', () => {
    beforeAll(async () => {
      port = freeLoopbackPort();
      const config = join(directory, 'server.properties');
      writeFileSync(
        config,
        [`listeners=SASL_PLAINTEXT://127.0.0.1:${port},PLAINTEXT://127.0.0.1:${freeLoopbackPort()}`, 'sasl.enabled.mechanisms=SCRAM-SHA-256,SCRAM-SHA-512', `log.dirs=${data}`, 'node.id=1', ''].join(
          '\n',
        ),
      );
      broker = Bun.spawn([process.execPath, CLI, 'broker', '--config', config, '--metrics', 'off'], { stdout: 'pipe', stderr: 'pipe' });
      const lines: string[] = [];
      for (const stream of [broker.stdout, broker.stderr]) {
        void (async () => {
          for await (const chunk of stream) lines.push(new TextDecoder().decode(chunk));
        })();
      }
      await until(() => lines.join('').includes('listener SASL_PLAINTEXT on 127.0.0.1'), 'the broker to listen', 60_000);
    });

    test('ScramSaslClient logs in with each mechanism the user has, and only with the right password', async () => {
      expect(await scramLogin(SCRAM_SHA_256, 'alice', ALICE_PASSWORD)).toBe('authenticated');
      expect(await scramLogin(SCRAM_SHA_512, 'alice', ALICE_PASSWORD)).toBe('authenticated');
      expect(await scramLogin(SCRAM_SHA_512, 'bob', BOB_PASSWORD)).toBe('authenticated');
      expect(await scramLogin(SCRAM_SHA_256, 'bob', BOB_PASSWORD)).toMatch(/SaslAuthenticate answered 58/); // bob has no SHA-256 credential
      expect(await scramLogin(SCRAM_SHA_512, 'alice', 'wrong')).toMatch(/SaslAuthenticate answered 58/);
    });

    test('kcat (librdkafka) logs in with SCRAM-SHA-512, produces and reads back', async () => {
      const produced = await kcat(['-P', '-t', 'scram-users', '-p', '0'], 'bob', BOB_PASSWORD, 'one\ntwo\n');
      expect(produced.exitCode).toBe(0);
      const consumed = await kcat(['-C', '-t', 'scram-users', '-p', '0', '-o', 'beginning', '-e', '-q'], 'bob', BOB_PASSWORD);
      expect(consumed.stdout.trim().split('\n')).toEqual(['one', 'two']);
      const refused = await kcat(['-L', '-m', '5'], 'bob', 'wrong');
      expect(refused.exitCode).not.toBe(0);
      expect(refused.stderr).toMatch(/Authentication failed|SASL authentication error/i);
    });

    test('users added and removed while the broker runs apply within its refresh', async () => {
      expect((await users(['add', 'carol', '--data', data], 'carol-password\n')).exitCode).toBe(0);
      await pollUntil(async () => (await scramLogin(SCRAM_SHA_256, 'carol', 'carol-password')) === 'authenticated', 'carol to log in');

      expect(await users(['remove', 'alice', '--data', data, '--mechanism', 'SCRAM-SHA-256'])).toMatchObject({ exitCode: 0, stdout: 'alice: SCRAM-SHA-256 removed\n' });
      await pollUntil(async () => (await scramLogin(SCRAM_SHA_256, 'alice', ALICE_PASSWORD)) !== 'authenticated', "alice's SCRAM-SHA-256 login to be refused");
      expect(await scramLogin(SCRAM_SHA_512, 'alice', ALICE_PASSWORD)).toBe('authenticated');
      expect(await users(['remove', 'alice', '--data', data])).toMatchObject({ exitCode: 0, stdout: 'alice: SCRAM-SHA-512 removed\n' });
      await pollUntil(async () => (await scramLogin(SCRAM_SHA_512, 'alice', ALICE_PASSWORD)) !== 'authenticated', "alice's SCRAM-SHA-512 login to be refused");
      expect((await users(['list', '--data', data])).stdout).toBe('bob: SCRAM-SHA-512 (8192 iterations)\ncarol: SCRAM-SHA-256 (4096 iterations), SCRAM-SHA-512 (4096 iterations)\n');
    });
  });
});

/** Polls an asynchronous condition (a login) until it holds; throws naming `what` after 10 s. */
async function pollUntil(condition: () => Promise<boolean>, what: string): Promise<void> {
  const deadline = performance.now() + 10_000;
  while (!(await condition())) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(100);
  }
}
