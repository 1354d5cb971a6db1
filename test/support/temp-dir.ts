import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const created: string[] = [];

/**
 * A fresh directory, removed when the test run ends (test/support/preload.ts). Not after each
 * test: files share one in beforeAll, and bun runs this module once per process, so a hook here
 * would belong to the first test file that imported it (the others' directories stayed: 869 of
 * them after a full run).
 */
export function tempDir(prefix = 'ferry-test-'): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  created.push(dir);
  return dir;
}

/** Removes every directory tempDir made so far. */
export function removeTempDirs(): void {
  for (const dir of created.splice(0)) rmSync(dir, { recursive: true, force: true });
}
