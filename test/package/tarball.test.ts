import { expect, test } from 'bun:test';
import { copyFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tempDir } from '../support/temp-dir.ts';
import { offlineLockFor } from './offline-lock.ts';
import { runCommand, runOrFail } from './run-command.ts';

const REPOSITORY = resolve(import.meta.dir, '../..');
/** npm pack copies ~2 MB of sources; npm ci unpacks ~70 packages from the cache (8 s measured on 2 shared cores). */
const PACK_TIMEOUT_MS = 60_000;
const INSTALL_TIMEOUT_MS = 180_000;
/** One run of the example: open, create or reuse, produce, one upload, consume (0.2 s measured). */
const EXAMPLE_TIMEOUT_MS = 60_000;
const TEST_TIMEOUT_MS = PACK_TIMEOUT_MS + INSTALL_TIMEOUT_MS + 4 * EXAMPLE_TIMEOUT_MS;
/** npm never asks a registry: the install is from its cache or fails (ENOTCACHED). */
const NPM_OFFLINE = { npm_config_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
/** Bun runs the example as a user would, but never installs a missing package on the fly (a registry request). */
const BUN = [process.execPath, '--no-install'];

interface PackedFile {
  readonly path: string;
}

/** `npm pack` of this repository into `destination`: the tarball's name and the files it holds. */
async function pack(destination: string): Promise<{ tarball: string; files: string[] }> {
  const { stdout } = await runOrFail(['npm', 'pack', '--json', '--pack-destination', destination], REPOSITORY, PACK_TIMEOUT_MS, NPM_OFFLINE);
  const [packed] = JSON.parse(stdout) as { filename: string; files: PackedFile[] }[];
  return { tarball: packed!.filename, files: packed!.files.map((file) => file.path) };
}

/** A fresh Bun project beside the tarball that depends on it alone, installed offline. */
async function freshProject(root: string, tarball: string): Promise<string> {
  const project = join(root, 'app');
  mkdirSync(project);
  const spec = `file:../${tarball}`;
  writeFileSync(join(project, 'package.json'), JSON.stringify({ name: 'app', version: '1.0.0', private: true, type: 'module', dependencies: { ferry: spec } }, null, 2));
  writeFileSync(join(project, 'package-lock.json'), JSON.stringify(offlineLockFor(REPOSITORY, 'app', spec), null, 2));
  const install = await runOrFail(['npm', 'ci', '--offline', '--no-audit', '--no-fund'], project, INSTALL_TIMEOUT_MS, NPM_OFFLINE);
  console.log(`npm ci --offline of the tarball and its dependencies: ${install.elapsedMs} ms`);
  return project;
}

test(
  'the packed tarball carries the sources and prebuilt native code, not the tests',
  async () => {
    const { files } = await pack(tempDir());
    for (const needed of [
      'package.json',
      'LICENSE',
      'README.md',
      'src/engine/index.ts',
      'src/store/index.ts',
      'src/broker/index.ts',
      'src/needs-bun.js',
      'src/cli.ts',
      'native/prebuilt/crc32c.wasm',
      'native/crc32c.tcc.c',
    ]) {
      expect(files).toContain(needed);
    }
    const unwanted = files.filter((path) => /^(test|bench|data|examples|node_modules|src\/sim)\//.test(path));
    expect(unwanted).toEqual([]);
  },
  PACK_TIMEOUT_MS,
);

test(
  'a fresh Bun project installs the tarball offline and runs the README example twice',
  async () => {
    const root = tempDir('ferry-package-');
    const { tarball } = await pack(root);
    const project = await freshProject(root, tarball);
    copyFileSync(join(REPOSITORY, 'examples/embedded.ts'), join(project, 'embedded.ts'));

    // The first run creates the topic; the second reuses it (ensureTopic) and appends after the first record.
    const first = await runOrFail([...BUN, 'embedded.ts'], project, EXAMPLE_TIMEOUT_MS);
    expect(first.stdout).toBe('0 {"total": 42}\n');
    const second = await runOrFail([...BUN, 'embedded.ts'], project, EXAMPLE_TIMEOUT_MS);
    expect(second.stdout).toBe('1 {"total": 42}\n');
    console.log(`embedded example: first run ${first.elapsedMs} ms, second ${second.elapsedMs} ms`);

    // The `ferry` command comes with it.
    const help = await runOrFail([...BUN, 'node_modules/.bin/ferry', '--help'], project, EXAMPLE_TIMEOUT_MS);
    expect(help.stdout).toContain('usage: ferry <command>');

    // Under Node, the package says in one line that it needs Bun.
    const underNode = await runCommand(['node', '--input-type=module', '-e', "await import('ferry')"], project, EXAMPLE_TIMEOUT_MS);
    expect(underNode.exitCode).not.toBe(0);
    expect(underNode.stderr).toContain('Ferry needs Bun');
  },
  TEST_TIMEOUT_MS,
);
