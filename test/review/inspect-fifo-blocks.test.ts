// Review finding (issue 14): `ferry inspect PATH` reads PATH whole with readFileSync before it
// knows what it is; on a FIFO (or /dev/stdin from a terminal) it blocks forever instead of the
// one-line "is neither a segment nor a WAL object" refusal every other non-file gets.
import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { tempDir } from '../support/temp-dir.ts';

const CLI = `${import.meta.dir}/../../src/cli.ts`;
const ANSWER_WITHIN_MS = 5_000;

test('ferry inspect on a FIFO answers with one line instead of blocking', async () => {
  const fifo = join(tempDir(), 'pipe.o');
  expect(Bun.spawnSync(['mkfifo', fifo]).exitCode).toBe(0);
  const child = Bun.spawn([process.execPath, CLI, 'inspect', fifo], { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe', env: { ...process.env, FERRY_DEBUG: '' } });
  const timedOut = await Promise.race([child.exited.then(() => false), Bun.sleep(ANSWER_WITHIN_MS).then(() => true)]);
  if (timedOut) child.kill(9);
  expect(timedOut).toBe(false);
  const stderr = await new Response(child.stderr).text();
  expect(stderr).toMatch(/^ferry inspect: [^\n]*\n$/);
}, 20_000);
