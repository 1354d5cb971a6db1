import { expect, test } from 'bun:test';
import { join } from 'node:path';

/** Seeds whose scenarios cover one broker and clusters (with and without replication and re-created topics), and an embedded engine (21). */
const TRAPPED_SEEDS = [1, 3, 4, 7, 12, 21];

test('a simulated run never reaches real timers, real time, real randomness or real sockets', () => {
  const child = Bun.spawnSync([process.execPath, join(import.meta.dir, 'trapped-run.ts'), ...TRAPPED_SEEDS.map(String)], { stderr: 'pipe' });
  expect(child.exitCode).toBe(0);
  const { reaches, seeds } = JSON.parse(child.stdout.toString().trim().split('\n').at(-1)!) as { reaches: string[]; seeds: number };
  expect(seeds).toBe(TRAPPED_SEEDS.length);
  expect(reaches.slice(0, 3)).toEqual([]);
}, 120_000);
