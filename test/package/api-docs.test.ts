import { expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { tempDir } from '../support/temp-dir.ts';
import { runCommand } from './run-command.ts';

const REPOSITORY = resolve(import.meta.dir, '../..');
const FIXTURES = join(import.meta.dir, 'fixtures');
const TYPEDOC = [process.execPath, join(REPOSITORY, 'node_modules/typedoc/bin/typedoc')];
/** TypeDoc loads TypeScript and the three entry points' program: 8-25 s measured on 2 shared cores. */
const TYPEDOC_TIMEOUT_MS = 120_000;

test(
  'npm run docs:api builds the API reference of ferry, ferry/store and ferry/broker, every export documented',
  async () => {
    const out = join(tempDir(), 'api');
    const { exitCode, stdout, stderr } = await runCommand(['npm', 'run', '--silent', 'docs:api', '--', '--out', out], REPOSITORY, TYPEDOC_TIMEOUT_MS);
    // typedoc.json treats validation warnings (notDocumented among them) as errors: each names the symbol.
    expect(`${stdout}${stderr}`).not.toContain('does not have any documentation');
    expect(exitCode).toBe(0);
    for (const page of ['index.html', 'modules/ferry.html', 'modules/ferry_store.html', 'modules/ferry_broker.html', 'classes/ferry.Ferry.html']) {
      expect(existsSync(join(out, page))).toBe(true);
    }
  },
  TYPEDOC_TIMEOUT_MS,
);

test(
  'an exported symbol without TSDoc fails the build, naming it',
  async () => {
    const out = join(tempDir(), 'api');
    // typedoc.json's rules over a fixture entry point (and its own tsconfig, so only it is loaded).
    const args = ['--tsconfig', join(FIXTURES, 'tsconfig.json'), '--entryPoints', join(FIXTURES, 'undocumented.ts'), '--out', out];
    const { exitCode, stdout, stderr } = await runCommand([...TYPEDOC, ...args], REPOSITORY, TYPEDOC_TIMEOUT_MS);
    expect(exitCode).not.toBe(0);
    expect(`${stdout}${stderr}`).toContain('undocumentedExport (CallSignature), defined in ferry/test/package/fixtures/undocumented.ts, does not have any documentation');
    expect(existsSync(out)).toBe(false);
  },
  TYPEDOC_TIMEOUT_MS,
);
