// The long form of test/faults/idempotent-restart.test.ts (issue 9 black-box run (a)): repeats the
// run over consecutive seeds and prints each run's counts.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { readRunArgs } from './run-args.ts';
import { describeVerdict } from '../support/ack-ledger.ts';
import { runIdempotentRestart } from './idempotent-restart-scenario.ts';

const USAGE = `usage: bun test/faults/idempotent-restart-runs.ts [--runs N] [--seed S] [--records N] [--restarts N] [--wipes N] [--partitions N] [--npm] [--keep]

A kafkajs idempotent producer (retries on, acks -1) writes unique values to one ferry broker
(file WAL store) that is killed with kill -9 or stopped with SIGTERM and restarted at seeded
moments; everything is read back and checked: lost, duplicated, misplaced must all be 0.

  --runs N       runs, with seeds S, S+1, ... (default 5)
  --seed S       first seed (default 1)
  --records N    records acknowledged per run (default 500)
  --restarts N   restarts per run, alternating kill -9 and SIGTERM (default 4)
  --wipes N      of those, restarts on a removed data directory (a replaced instance; default 0)
  --partitions N partitions of the topic (default 1)
  --npm          start the broker with npm start and stop it with SIGTERM to npm only
  --keep         keep each run's data directory (printed) instead of removing it
  -h, --help     this text

Exits 1 if any run lost, duplicated or misplaced a record.`;

const values = readRunArgs(USAGE, { runs: 5, seed: 1, records: 500, restarts: 4, wipes: 0, partitions: 1, npm: false, keep: false });
const { runs, seed: firstSeed, records, restarts, wipes, partitions } = values;
if (wipes > restarts) {
  console.error(`--wipes ${wipes} is more than --restarts ${restarts}`);
  process.exit(2);
}
const launch = values.npm ? ({ launcher: 'npm start', stops: ['SIGTERM'] } as const) : {};
let failures = 0;
for (let run = 0; run < runs; run++) {
  const seed = firstSeed + run;
  const directory = mkdtempSync(join(tmpdir(), `ferry-idempotent-restart-${seed}-`));
  const { verdict, faults } = await runIdempotentRestart({ seed, directory, records, restarts, wipes, partitions, ...launch });
  const bad = verdict.lost.length + verdict.duplicated.length + verdict.misplaced.length > 0;
  if (bad) failures++;
  console.log(`seed ${seed}: ${faults.join(', ')}: ${describeVerdict(verdict)}${values.keep ? ` (data in ${directory})` : ''}`);
  if (!values.keep) rmSync(directory, { recursive: true, force: true });
}
console.log(`${runs} runs, ${failures} with lost, duplicated or misplaced records`);
process.exit(failures === 0 ? 0 : 1);
