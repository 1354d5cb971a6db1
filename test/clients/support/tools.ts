// Whether a client's tool is installed. Outside CI a missing tool skips that client's tests with
// a message naming what to install; in CI (process.env.CI set) every client must run, so a
// missing tool fails the file instead of passing silently.
import { describe } from 'bun:test';
import { existsSync } from 'node:fs';

/** The Debian interpreter: Debian's python3-kafka and python3-confluent-kafka are on its path only. */
export const DEBIAN_PYTHON = '/usr/bin/python3';

/** describe, or describe.skip with a reason when `missing` names something absent outside CI. */
export function describeClient(name: string, missing: string | null): typeof describe | typeof describe.skip {
  if (missing === null) return describe;
  if (process.env.CI !== undefined) throw new Error(`${name}: ${missing} (CI must run every client: .ci/run installs it)`);
  console.warn(`skipping the ${name} tests: ${missing} (.ci/run installs it)`);
  return describe.skip;
}

/** null when `python` can import `module`, else what is missing. */
export function missingPythonModule(module: string, debianPackage: string): string | null {
  if (!existsSync(DEBIAN_PYTHON)) return `${DEBIAN_PYTHON} is not installed`;
  const probe = Bun.spawnSync([DEBIAN_PYTHON, '-c', `import ${module}`], { stdout: 'ignore', stderr: 'ignore' });
  return probe.exitCode === 0 ? null : `${DEBIAN_PYTHON} cannot import ${module}: apt-get install -y ${debianPackage}`;
}

/** null when `command` is on PATH, else what is missing. */
export function missingCommand(command: string, debianPackage: string): string | null {
  return Bun.which(command) === null ? `${command} is not installed: apt-get install -y ${debianPackage}` : null;
}
