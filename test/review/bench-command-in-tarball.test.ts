// Review finding (issue 14): the tarball leaves bench/ out (package.json `files`), but the installed
// `ferry` still lists `bench` in --help and spawns `${import.meta.dir}/../bench/run.ts`, so
// `ferry bench` from the package prints Bun's own `error: Module not found ".../bench/run.ts"`
// instead of the one-line 'ferry bench: what; what to do' every other failure gives.
import { expect, test } from 'bun:test';
import { symlinkSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tempDir } from '../support/temp-dir.ts';
import { runCommand, runOrFail } from '../package/run-command.ts';

const REPOSITORY = resolve(import.meta.dir, '../..');
const NPM_OFFLINE = { npm_config_offline: 'true', npm_config_audit: 'false', npm_config_fund: 'false', npm_config_update_notifier: 'false' };
const TIMEOUT_MS = 60_000;

test(
  'ferry bench from the packed tarball fails in one ferry line (or runs)',
  async () => {
    const root = tempDir('ferry-review-pack-');
    const { stdout } = await runOrFail(['npm', 'pack', '--json', '--pack-destination', root], REPOSITORY, TIMEOUT_MS, NPM_OFFLINE);
    const [packed] = JSON.parse(stdout) as { filename: string }[];
    await runOrFail(['tar', 'xzf', join(root, packed!.filename), '-C', root], root, TIMEOUT_MS);
    const installed = join(root, 'package');
    symlinkSync(join(REPOSITORY, 'node_modules'), join(installed, 'node_modules')); // the dependencies, as an install would give them
    const help = await runOrFail([process.execPath, 'src/cli.ts', '--help'], installed, TIMEOUT_MS);
    expect(help.stdout).toContain('bench'); // the installed CLI offers it
    const bench = await runCommand([process.execPath, 'src/cli.ts', 'bench', '--help'], installed, TIMEOUT_MS, { FERRY_DEBUG: '' });
    if (bench.exitCode !== 0) expect(bench.stderr).toMatch(/^ferry bench: [^\n]*\n$/);
  },
  3 * TIMEOUT_MS,
);
