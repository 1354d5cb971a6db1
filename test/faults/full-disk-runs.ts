// The long form of test/faults/full-disk.test.ts (issue 9 black-box run (e)): repeats the run over
// consecutive seeds (different sizes and moments) and prints each run's counts.
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readRunArgs } from './run-args.ts';
import { describeVerdict } from '../support/ack-ledger.ts';
import { mountTmpfs, runFullDisk } from './full-disk-scenario.ts';

const USAGE = `usage: bun test/faults/full-disk-runs.ts [--runs N] [--seed S] [--full log|wal]

Runs a ferry broker whose data directory (or WAL store, --full wal) is a small tmpfs (needs root to mount), fills the disk
while a kafkajs idempotent producer writes, frees it while the broker runs, and checks that
produce resumes without a restart, the failure is logged once, and nothing acknowledged is lost,
duplicated or misplaced.

  --runs N       runs, with seeds S, S+1, ... (default 5)
  --seed S       first seed (default 1)
  --full WHAT    the disk that fills: log (the data directory, default) or wal (the WAL store's)
  -h, --help     this text

Exits 1 if any run failed a check.`;

const { runs, seed: firstSeed, full } = readRunArgs(USAGE, { runs: 5, seed: 1, full: 'log' });
if (full !== 'log' && full !== 'wal') {
  console.error(`--full must be log or wal, not ${full}`);
  process.exit(2);
}
let failures = 0;
for (let run = 0; run < runs; run++) {
  const seed = firstSeed + run;
  const root = mkdtempSync(join(tmpdir(), `ferry-full-disk-${seed}-`));
  const disk = join(root, 'disk');
  mkdirSync(disk);
  const cannotMount = mountTmpfs(disk);
  if (cannotMount !== null) {
    console.error(`cannot mount a tmpfs (needs root): ${cannotMount}`);
    process.exit(2);
  }
  try {
    const result = await runFullDisk(seed, root, full);
    const { verdict } = result;
    const [failed, recovered] = full === 'log' ? [result.failureLines, result.recoveryLines] : [result.walFailureLines, result.walRecoveryLines];
    const ok = verdict.lost.length + verdict.duplicated.length + verdict.misplaced.length === 0 && result.ranThroughout && failed === 1 && recovered === 1 && !result.uncaughtError;
    if (!ok) failures++;
    console.log(
      `seed ${seed}: ${result.plan}: ${describeVerdict(verdict)}; ran throughout ${result.ranThroughout}, failure logged ${failed}x, recovery logged ${recovered}x, uncaught error ${result.uncaughtError}`,
    );
  } catch (error) {
    failures++;
    console.log(`seed ${seed}: failed: ${error instanceof Error ? error.message.split('\n')[0] : String(error)}`);
  } finally {
    Bun.spawnSync(['umount', disk]);
    rmSync(root, { recursive: true, force: true });
  }
}
console.log(`${runs} runs, ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
