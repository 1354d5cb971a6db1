import { expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CRC32C_ENV } from '../../src/format/crc32c/select.ts';

const CLI = join(import.meta.dir, '../../src/cli.ts');
/** How long a broker on an empty data directory may take to say it listens. */
const START_TIMEOUT_MS = 30_000;

test(
  'a broker whose stdout is not a terminal writes JSON lines: the start line first, then its stop',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ferry-log-out-'));
    const child = Bun.spawn([process.execPath, CLI, 'broker', '--listen', '127.0.0.1:0', '--metrics', 'off', '--data', join(dir, 'data'), '--log-level', 'info'], {
      stdin: 'ignore',
      stdout: 'pipe',
      stderr: 'pipe',
      env: { ...process.env, [CRC32C_ENV]: 'ts' },
    });
    try {
      const lines = await firstLines(child.stdout, 1);
      const start = JSON.parse(lines[0]!) as Record<string, unknown>;
      // FERRY_CRC32C names the implementation (no calibration): the start line says which one runs.
      expect(start).toMatchObject({ level: 30, node: 1, component: 'broker', walStore: 'file', crc32c: 'ts' });
      expect(String(start.msg)).toMatch(/^ferry broker 1 listening on 127\.0\.0\.1:\d+/);
      expect(typeof start.time).toBe('number');
      expect(start.config).toMatchObject({ nodeId: 1, logLevel: 'info' });
      child.kill('SIGTERM');
      expect(await child.exited).toBe(0);
    } finally {
      child.kill('SIGKILL');
      rmSync(dir, { recursive: true, force: true });
    }
  },
  START_TIMEOUT_MS + 10_000,
);

/** The first `count` lines of a stream (fails after START_TIMEOUT_MS). */
async function firstLines(stream: ReadableStream<Uint8Array>, count: number): Promise<string[]> {
  const reader = stream.getReader();
  const timeout = setTimeout(() => void reader.cancel(), START_TIMEOUT_MS);
  let text = '';
  try {
    while (text.split('\n').length <= count) {
      const { value, done } = await reader.read();
      if (done) throw new Error(`stdout ended after: ${text}`);
      text += new TextDecoder().decode(value);
    }
  } finally {
    clearTimeout(timeout);
    reader.releaseLock();
  }
  return text.split('\n').slice(0, count);
}
