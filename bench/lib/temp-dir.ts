import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** Directories made by this process, removed at exit even when a bench throws or is interrupted. */
const liveDirectories = new Set<string>();
let handlersInstalled = false;
/** Exit status of a process stopped by SIGINT (128 + signal 2), as shells report it. */
const SIGINT_EXIT_STATUS = 130;

function removeAll(): void {
  for (const directory of liveDirectories) rmSync(directory, { recursive: true, force: true });
  liveDirectories.clear();
}

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', removeAll);
  process.on('SIGINT', () => {
    removeAll();
    process.exit(SIGINT_EXIT_STATUS);
  });
}

/** A fresh directory under os.tmpdir(); remove it with removeTempDir (or it goes at exit). */
export function makeTempDir(prefix: string): string {
  installHandlers();
  const directory = mkdtempSync(join(tmpdir(), `ferry-bench-${prefix}-`));
  liveDirectories.add(directory);
  return directory;
}

export function removeTempDir(directory: string): void {
  rmSync(directory, { recursive: true, force: true });
  liveDirectories.delete(directory);
}

/** Leaves `directory` in place at exit (a run kept for a look afterwards). */
export function keepTempDir(directory: string): void {
  liveDirectories.delete(directory);
}

/** Runs `body` with a fresh temp directory and removes the directory afterwards, whatever happens. */
export async function withTempDir<T>(prefix: string, body: (directory: string) => Promise<T> | T): Promise<T> {
  const directory = makeTempDir(prefix);
  try {
    return await body(directory);
  } finally {
    removeTempDir(directory);
  }
}
