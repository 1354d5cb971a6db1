// Builds test/clients/sarama (a Go program over Debian's sarama 1.22.1) offline, in GOPATH mode
// against /usr/share/gocode, where Debian's golang-*-dev packages put their sources: no module
// proxy, no network. The binary is cached in the temp directory under the hash of its source,
// so a second run of the tests skips the build.
import { existsSync, mkdirSync, readFileSync, renameSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

export const SARAMA_SOURCE = join(import.meta.dir, '..', 'sarama');
/** Debian's Go sources (GOPATH layout). */
const DEBIAN_GOPATH = '/usr/share/gocode';
const SARAMA_PACKAGE = join(DEBIAN_GOPATH, 'src/github.com/Shopify/sarama');
/** A cold build (sarama and its cgo zstd binding) takes ~10 s on one core. */
const BUILD_TIMEOUT_MS = 180_000;

/** null when go and Debian's sarama are installed, else what is missing. */
export function missingSarama(): string | null {
  if (Bun.which('go') === null) return 'go is not installed: apt-get install -y golang';
  if (!existsSync(SARAMA_PACKAGE)) return `${SARAMA_PACKAGE} is missing: apt-get install -y golang-github-shopify-sarama-dev`;
  return null;
}

/** The path of the built suite binary (built now unless a binary of this source exists). */
export async function buildSaramaSuite(): Promise<string> {
  const source = readFileSync(join(SARAMA_SOURCE, 'main.go'));
  const hash = new Bun.CryptoHasher('sha256').update(source).digest('hex').slice(0, 16);
  const directory = join(tmpdir(), 'ferry-sarama-suite');
  const binary = join(directory, `sarama-suite-${hash}`);
  if (existsSync(binary)) return binary;
  mkdirSync(directory, { recursive: true });
  const env = { ...process.env, GO111MODULE: 'off', GOPATH: DEBIAN_GOPATH, GOFLAGS: '', GOCACHE: join(directory, 'go-cache') };
  const build = Bun.spawn(['go', 'build', '-o', `${binary}.partial`, '.'], { cwd: SARAMA_SOURCE, env, stdout: 'pipe', stderr: 'pipe' });
  const timer = setTimeout(() => build.kill('SIGKILL'), BUILD_TIMEOUT_MS);
  const [stderr, code] = await Promise.all([new Response(build.stderr).text(), build.exited]);
  clearTimeout(timer);
  if (code !== 0) throw new Error(`go build of ${SARAMA_SOURCE} failed (${code ?? build.signalCode}):\n${stderr}`);
  // Renamed into place whole, so a concurrent or interrupted run never finds half a binary.
  renameSync(`${binary}.partial`, binary);
  return binary;
}
