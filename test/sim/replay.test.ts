import { expect, test } from 'bun:test';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runSeed } from '../../src/sim/run.ts';

/**
 * Seeds of different shapes (single broker, clusters of several sizes, and an embedded engine: seed
 * 21) whose runs are replayed; 18 and 113 stream through sequential writes (a tiering cluster whose
 * finishes lose a quarter of their answers, an embedded engine).
 */
const REPLAYED_SEEDS = [1, 2, 3, 4, 5, 21, 18, 113];

test('the same seed gives the same run: equal trace hashes over two runs of each of several seeds', async () => {
  for (const seed of REPLAYED_SEEDS) {
    const first = await runSeed({ seed });
    const second = await runSeed({ seed });
    expect({ seed, hash: second.traceHash, events: second.eventsRun }).toEqual({ seed, hash: first.traceHash, events: first.eventsRun });
    expect(first.history.ops.length).toBeGreaterThan(0); // a run that did nothing would replay trivially
  }
}, 120_000);

test('different seeds give different runs', async () => {
  const hashes = new Set<string>();
  for (const seed of REPLAYED_SEEDS) hashes.add((await runSeed({ seed })).traceHash);
  expect(hashes.size).toBe(REPLAYED_SEEDS.length);
}, 120_000);

/** A tiering seed whose first tier round, in a fresh process, once raced a real WASM load (src/sim/run.ts). */
const FRESH_PROCESS_SEED = 4;

async function traceInFreshProcess(seed: number): Promise<string> {
  const child = Bun.spawn([process.execPath, 'src/sim/cli.ts', '--seed', String(seed)], { stdout: 'pipe', stderr: 'pipe' });
  const output = await new Response(child.stdout).text();
  await child.exited;
  const trace = /trace ([0-9a-f]{16})/.exec(output)?.[1];
  expect(trace).toBeDefined();
  return trace!;
}

test('a seed replays the same in a fresh process, where nothing real (a module load, a WASM compile) was done before it', async () => {
  const [first, second] = [await traceInFreshProcess(FRESH_PROCESS_SEED), await traceInFreshProcess(FRESH_PROCESS_SEED)];
  expect(second).toBe(first);
  expect((await runSeed({ seed: FRESH_PROCESS_SEED })).traceHash).toBe(first); // and the same as in this process, after other runs
}, 120_000);

test('--hashes writes each seed of a range with its trace hash, by seed, the same with workers as in one process', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-hashes-'));
  try {
    const files = [join(dir, 'one.txt'), join(dir, 'two.txt')];
    for (const [jobs, file] of [
      ['1', files[0]!],
      ['2', files[1]!],
    ] as const) {
      const child = Bun.spawn([process.execPath, 'src/sim/cli.ts', '--seeds', '3', '--from', '3', '--jobs', jobs, '--no-record', '--hashes', file], { stdout: 'ignore', stderr: 'ignore' });
      expect(await child.exited).toBe(0);
    }
    const lines = readFileSync(files[0]!, 'utf8').trim().split('\n');
    expect(lines.map((line) => Number(line.split(' ')[0]))).toEqual([3, 4, 5]);
    expect(lines[1]!.split(' ')[1]).toBe((await runSeed({ seed: 4 })).traceHash);
    expect(readFileSync(files[1]!, 'utf8')).toBe(readFileSync(files[0]!, 'utf8'));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 120_000);
