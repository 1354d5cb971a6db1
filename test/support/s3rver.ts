/**
 * A real S3 HTTP endpoint for tests and benches: s3rver (npm) in a Node subprocess on a free
 * loopback port. Node, not Bun, because s3rver signs ListObjectsV2 continuation tokens with DES,
 * which Node 17+ offers only with `--openssl-legacy-provider`.
 *
 * s3rver accepts access key `S3RVER` with any secret and does not check v4 signatures; it ignores
 * conditional headers on writes (conditional-s3-proxy.ts enforces them in front of it).
 */
import { join } from 'node:path';

export const S3RVER_ACCESS_KEY_ID = 'S3RVER';
export const S3RVER_SECRET_ACCESS_KEY = 'S3RVER';
export const S3RVER_REGION = 'us-east-1';

/** Node starts s3rver in ~0.5 s; 20 s covers a loaded 2-core CI machine. */
const STARTUP_TIMEOUT_MS = 20_000;
/** How long stop() waits for a clean exit before SIGKILL. */
const STOP_TIMEOUT_MS = 3_000;
const LAUNCHER = join(import.meta.dir, 's3rver-launcher.cjs');

export interface S3rver {
  /** `http://127.0.0.1:<port>` */
  readonly endpoint: string;
  createBucket(name: string): Promise<void>;
  stop(): Promise<void>;
}

function nodeBinary(): string {
  return Bun.which('node') ?? '/usr/bin/node';
}

export async function startS3rver(): Promise<S3rver> {
  const child = Bun.spawn([nodeBinary(), '--openssl-legacy-provider', LAUNCHER], { stdin: 'pipe', stdout: 'pipe', stderr: 'pipe' });
  // The launcher exits when its stdin closes, so it also dies with this process; kill it too on a clean exit.
  const killOnExit = (): void => void child.kill('SIGKILL');
  process.on('exit', killOnExit);
  const stderr = drainTail(child.stderr);
  let port: number;
  try {
    port = await readPort(child, stderr);
  } catch (error) {
    child.kill('SIGKILL');
    process.off('exit', killOnExit);
    throw error;
  }
  const endpoint = `http://127.0.0.1:${port}`;
  return {
    endpoint,
    async createBucket(name: string): Promise<void> {
      const response = await fetch(`${endpoint}/${name}`, { method: 'PUT' });
      if (!response.ok) throw new Error(`s3rver: creating bucket ${name} answered ${response.status}: ${await response.text()}`);
      await response.arrayBuffer();
    },
    async stop(): Promise<void> {
      process.off('exit', killOnExit);
      child.stdin.end();
      const timer = setTimeout(() => child.kill('SIGKILL'), STOP_TIMEOUT_MS);
      await child.exited;
      clearTimeout(timer);
    },
  };
}

/** The port from the launcher's first stdout line, or an error carrying its stderr. */
/** Keeps reading a pipe so the child never blocks on it; returns its last few KiB on demand. */
function drainTail(stream: ReadableStream<Uint8Array>): () => string {
  const tailCharsMax = 4096;
  let tail = '';
  const decoder = new TextDecoder();
  void (async () => {
    for await (const chunk of stream) tail = (tail + decoder.decode(chunk, { stream: true })).slice(-tailCharsMax);
  })().catch(() => undefined);
  return () => tail;
}

async function readPort(child: Bun.Subprocess<'pipe', 'pipe', 'pipe'>, stderr: () => string): Promise<number> {
  const reader = child.stdout.getReader();
  const decoder = new TextDecoder();
  let buffered = '';
  const deadline = setTimeout(() => child.kill('SIGKILL'), STARTUP_TIMEOUT_MS);
  try {
    while (!buffered.includes('\n')) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`s3rver exited before listening (code ${await child.exited}): ${stderr()}`);
      buffered += decoder.decode(value, { stream: true });
    }
  } finally {
    clearTimeout(deadline);
    reader.releaseLock();
  }
  const { port } = JSON.parse(buffered.slice(0, buffered.indexOf('\n'))) as { port: number };
  return port;
}
