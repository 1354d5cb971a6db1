import { expect, test } from 'bun:test';
import { runSeed } from '../../src/sim/run.ts';

/** Seeds of different shapes (single broker and clusters of several sizes) whose runs are replayed. */
const REPLAYED_SEEDS = [1, 2, 3, 4, 5];

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
