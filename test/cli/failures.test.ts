// Every failure a user can cause prints one line, 'ferry <command>: what; what to do', no stack
// trace, and exits 2 (usage) or 1 (runtime), as `ferry --help` says. Found at the review of issue
// 14: a port in use, `--wal-store ftp://x`, a locked data directory printed stack traces, and an
// unknown flag printed Node's parser text about positional arguments.
import { afterEach, expect, test } from 'bun:test';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { TCPSocketListener } from 'bun';
import { freeLoopbackPort } from '../../bench/lib/child-processes.ts';
import { EXIT_FAILURE, EXIT_USAGE, explainFailure } from '../../src/cli/failure.ts';
import { FerryError } from '../../src/errors.ts';
import { DirLock } from '../../src/util/dir-lock.ts';
import { StoreError } from '../../src/store/errors.ts';
import { tempDir } from '../support/temp-dir.ts';

const CLI = `${import.meta.dir}/../../src/cli.ts`;
/** Flags that keep a broker off the default ports, so a failing test cannot hit a broker someone runs. */
const QUIET_BROKER = ['--listen', '127.0.0.1:0', '--metrics', 'off'];

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

async function ferry(args: readonly string[], env: Record<string, string> = {}): Promise<{ stdout: string; stderr: string; exitCode: number }> {
  const child = Bun.spawn([process.execPath, CLI, ...args], { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe', env: { ...process.env, FERRY_DEBUG: '', ...env } });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { stdout, stderr, exitCode };
}

/** Runs `ferry args`; expects one stderr line starting `ferry`, no trace, the exit code; returns the line. */
async function failure(args: readonly string[], exitCode: number, env: Record<string, string> = {}): Promise<string> {
  const result = await ferry(args, env);
  expect({ exitCode: result.exitCode, stderr: result.stderr }).toEqual({ exitCode, stderr: expect.stringMatching(/^ferry[ :][^\n]*\n$/) });
  expect(result.stderr).not.toContain('    at ');
  return result.stderr.trimEnd();
}

test('an unknown option is named, with the nearest known one', async () => {
  expect(await failure(['broker', '--listn', 'x'], EXIT_USAGE)).toBe("ferry broker: unknown option '--listn'; did you mean '--listen'? 'ferry broker --help' lists the options");
  expect(await failure(['demo', '--zzz'], EXIT_USAGE)).toBe("ferry demo: unknown option '--zzz'; 'ferry demo --help' lists the options");
});

test('a missing value, a value given to a switch, an unknown command', async () => {
  expect(await failure(['broker', '--listen'], EXIT_USAGE)).toBe("ferry broker: option '--listen' needs a value: --listen VALUE (--listen=VALUE when the value starts with '-')");
  expect(await failure(['broker', '--no-tier=yes'], EXIT_USAGE)).toBe("ferry broker: option '--no-tier' takes no value; write it alone");
  expect(await failure(['brokr'], EXIT_USAGE)).toBe("ferry: unknown command 'brokr'; did you mean 'broker'? 'ferry --help' lists the commands");
});

test('bad values: a number, an address, a store URL, a config file, a TLS file', async () => {
  const data = tempDir();
  expect(await failure(['demo', '--records', 'many'], EXIT_USAGE)).toContain("--records must be a positive integer, got 'many'");
  expect(await failure(['broker', '--data', data, '--listen', 'nowhere'], EXIT_USAGE)).toContain("--listen must be HOST:PORT, got 'nowhere'");
  expect(await failure(['broker', '--data', data, ...QUIET_BROKER, '--wal-store', 'ftp://x'], EXIT_USAGE)).toStartWith('ferry broker: object store URL "ftp://x": unknown scheme ftp:');
  const config = join(data, 'server.properties');
  writeFileSync(config, 'log.dirz=/tmp\n');
  expect(await failure(['broker', '--data', data, ...QUIET_BROKER, '--config', config], EXIT_USAGE)).toContain('log.dirz is not a Kafka or Ferry setting (did you mean log.dirs?)');
  expect(await failure(['broker', '--data', data, '--config', join(data, 'missing.properties')], EXIT_USAGE)).toContain('does not exist');
  writeFileSync(config, `listeners=SSL://127.0.0.1:0\nssl.keystore.location=${join(data, 'missing.pem')}\n`);
  // Read when the broker starts: a start refused is a runtime failure.
  expect(await failure(['broker', '--data', data, '--metrics', 'off', '--config', config], EXIT_FAILURE)).toContain('ssl.keystore.location');
});

test('a port in use names the address and the flag that chose it', async () => {
  const port = freeLoopbackPort();
  const holder: TCPSocketListener = Bun.listen({ hostname: '127.0.0.1', port, socket: { data() {} } });
  cleanups.push(() => holder.stop(true));
  const line = await failure(['broker', '--data', tempDir(), '--listen', `127.0.0.1:${port}`, '--metrics', 'off'], EXIT_FAILURE);
  expect(line).toBe(
    `ferry broker: broker 1 cannot start: 127.0.0.1:${port}: already in use by another process (EADDRINUSE); stop the process listening there, or choose another port (--listen HOST:PORT)`,
  );
  const metrics = await failure(['broker', '--data', tempDir(), '--listen', '127.0.0.1:0', '--metrics', `127.0.0.1:${port}`], EXIT_FAILURE);
  expect(metrics).toContain(`${port}: already in use`);
  expect(metrics).toContain('--metrics');
});

test('a locked data directory names the process holding it and the flag that moves this one', async () => {
  const data = tempDir();
  const lock = DirLock.acquire(data);
  cleanups.push(() => lock.release());
  const broker = await failure(['broker', '--data', data, ...QUIET_BROKER], EXIT_FAILURE);
  expect(broker).toContain(`${data} is in use by another Ferry log (could not lock .lock: held by process ${process.pid} (`);
  expect(broker).toEndWith('stop that process, or give this one another data directory (--data DIR)');
  const demo = await failure(['demo', '--dir', data, '--records', '1'], EXIT_FAILURE);
  expect(demo).toEndWith('(--dir DIR)');
});

test('a data directory under a file, and an unreachable S3 endpoint, are runtime failures', async () => {
  const file = join(tempDir(), 'file');
  writeFileSync(file, '');
  expect(await failure(['demo', '--dir', join(file, 'data'), '--records', '1'], EXIT_FAILURE)).toBe(
    `ferry demo: ${join(file, 'data')}: part of the path is a file, not a directory (ENOTDIR); check the path`,
  );
  const closed = freeLoopbackPort();
  const url = `s3://bucket/prefix?region=us-east-1&endpoint=http://127.0.0.1:${closed}&forcePathStyle=true&maxAttempts=1`;
  const line = await failure(['broker', '--data', tempDir(), ...QUIET_BROKER, '--wal-store', url], EXIT_FAILURE, { AWS_ACCESS_KEY_ID: 'test', AWS_SECRET_ACCESS_KEY: 'test' });
  expect(line).toContain('ECONNREFUSED');
  expect(line).toEndWith("check that the store's endpoint is up and reachable (the s3:// URL's endpoint=, AWS_ENDPOINT_URL)");
});

test('FERRY_DEBUG=1 adds the stack trace', async () => {
  const { stderr, exitCode } = await ferry(['demo', '--dir', '/proc/ferry-no-such-dir', '--records', '1'], { FERRY_DEBUG: '1' });
  expect(exitCode).toBe(EXIT_FAILURE);
  expect(stderr).toContain('    at ');
  expect(stderr.trimEnd().split('\n').at(-1)).toStartWith('ferry demo: /proc/ferry-no-such-dir');
});

test('--help of every command says what it does and exits 0; the top level documents the exit codes', async () => {
  const top = await ferry(['--help']);
  expect(top.exitCode).toBe(0);
  expect(top.stdout).toContain(`exit codes: 0 done; ${EXIT_USAGE} a usage error`);
  for (const command of ['broker', 'demo', 'inspect', 'users']) {
    const { stdout, exitCode } = await ferry([command, '--help']);
    expect({ exitCode, usage: stdout.startsWith(`usage: ferry ${command}`) }).toEqual({ exitCode: 0, usage: true });
  }
});

// Failures the tests cannot cause from a process running as root (permissions) or without filling a
// disk: the same mapping, called directly.
test('OS errors by code: what and what to do; a bug is not explained (its trace is printed)', () => {
  const os = (code: string, extra: object) => Object.assign(new Error(`${code}: failed`), { code, ...extra });
  expect(explainFailure(os('EACCES', { path: '/var/ferry' }), { dataFlag: '--data' })).toEqual({
    line: '/var/ferry: permission denied (EACCES); make it writable for this user, or use another data directory (--data DIR)',
    exitCode: EXIT_FAILURE,
  });
  expect(explainFailure(os('EACCES', { address: '0.0.0.0', port: 80 }))?.line).toBe('0.0.0.0:80: permission denied (EACCES); ports below 1024 need privileges: choose a port of 1024 or more');
  expect(explainFailure(os('ENOSPC', { path: '/d/x.log' }))?.line).toBe('/d/x.log: no space left on the device (ENOSPC); free some space, or use another directory');
  expect(explainFailure(os('EROFS', { path: '/ro' }))?.line).toBe('/ro: read-only file system (EROFS); use another directory on a writable file system');
  expect(explainFailure(new FerryError('Storage', 'appending to x failed', { cause: os('ENOSPC', {}) }))?.line).toBe('appending to x failed; free some space, or use another data directory');
  expect(explainFailure(new StoreError('AccessDenied', 'PutObject b/k: access denied'))).toEqual({
    line: 'PutObject b/k: access denied; check the credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_PROFILE) and the bucket policy',
    exitCode: EXIT_FAILURE,
  });
  expect(explainFailure(new TypeError('undefined is not an object'))).toBeNull();
  expect(explainFailure(new Error('assertion failed: offsets increase'))).toBeNull();
});
