import { expect, test } from 'bun:test';
import { resolve } from 'node:path';
import { runCommand } from './run-command.ts';

const REPOSITORY = resolve(import.meta.dir, '../..');
/** Node starts and fails an import in well under a second; generous for shared machines. */
const NODE_TIMEOUT_MS = 20_000;

// The repository imports itself by name (package.json's exports), as an installed package would be imported.
for (const entry of ['ferry', 'ferry/store', 'ferry/broker']) {
  test(
    `importing ${entry} under Node fails with one line that says Ferry needs Bun`,
    async () => {
      const { exitCode, stderr } = await runCommand(['node', '--input-type=module', '-e', `await import('${entry}')`], REPOSITORY, NODE_TIMEOUT_MS);
      expect(exitCode).not.toBe(0);
      expect(stderr).toContain("Error: Ferry needs Bun (it uses Bun.hash, bun:ffi, Bun's TCP and TLS sockets and Bun.serve, and ships TypeScript sources): run with bun");
    },
    NODE_TIMEOUT_MS,
  );
}

test('under Bun the same names load the TypeScript sources', async () => {
  const engine = await import('ferry');
  const store = await import('ferry/store');
  const broker = await import('ferry/broker');
  expect(typeof engine.Ferry.open).toBe('function');
  expect(typeof store.FileStore.open).toBe('function');
  expect(typeof broker.Broker.start).toBe('function');
});
