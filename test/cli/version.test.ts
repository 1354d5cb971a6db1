// `ferry --version` and `-V` print the package's version (package.json), so a deployment can say
// what it runs; the top-level --help names the option (issue 24).
import { expect, test } from 'bun:test';
import packageJson from '../../package.json' with { type: 'json' };

const CLI = `${import.meta.dir}/../../src/cli.ts`;

async function ferry(args: readonly string[]): Promise<{ stdout: string; stderr: string; exitCode: number }> {
  const child = Bun.spawn([process.execPath, CLI, ...args], { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
  return { stdout, stderr, exitCode };
}

test('--version and -V print the version from package.json and exit 0', async () => {
  expect(packageJson.version).toMatch(/^\d+\.\d+\.\d+/);
  for (const flag of ['--version', '-V']) expect(await ferry([flag])).toEqual({ stdout: `ferry ${packageJson.version}\n`, stderr: '', exitCode: 0 });
});

test('--help lists --version', async () => {
  const { stdout } = await ferry(['--help']);
  expect(stdout).toContain('-V, --version');
});
