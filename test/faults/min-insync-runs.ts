#!/usr/bin/env bun
// The longer form of black-box run (d) (test/faults/min-insync.test.ts runs one bounded run).
import { describeVerdict } from '../support/ack-ledger.ts';
import { runMinInsync } from './min-insync-scenario.ts';

const USAGE = `usage: bun test/faults/min-insync-runs.ts [--runs N] [--seed S] [--lease-ms MS] [--scan-interval-ms MS] [--records N]

Three cluster brokers on one file store, a topic of 3 partitions with replication factor 3 and
min.insync.replicas 2, a kafkajs producer with acks=all; each run kill -9s one broker (picked by
the seed) and checks that acks=all resumes on every partition within lease + scans + slack, and
that every acknowledged record is read back once, at its acknowledged offset.

  --runs N               runs, seeds S, S+1, ... (default 5)
  --seed S               first seed (default 1)
  --lease-ms MS          the brokers' --lease-ms (default 1500)
  --scan-interval-ms MS  the brokers' --scan-interval-ms (default 100)
  --records N            records acknowledged per partition before the kill (default 20)
  -h, --help             this text

Exits 1 if any run stalled or lost, duplicated or misplaced an acknowledged record.`;

function parse(argv: readonly string[]): { runs: number; seed: number; leaseMs: number; scanIntervalMs: number; records: number } {
  const values = { runs: 5, seed: 1, leaseMs: 1500, scanIntervalMs: 100, records: 20 };
  const names: Record<string, keyof typeof values> = { '--runs': 'runs', '--seed': 'seed', '--lease-ms': 'leaseMs', '--scan-interval-ms': 'scanIntervalMs', '--records': 'records' };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '-h' || arg === '--help') {
      console.log(USAGE);
      process.exit(0);
    }
    const name = names[arg];
    const value = Number(argv[i + 1]);
    if (name === undefined || !Number.isSafeInteger(value) || value < 0) {
      console.error(`bad argument ${JSON.stringify(arg)}${name === undefined ? '' : ` ${JSON.stringify(argv[i + 1])}`}\n\n${USAGE}`);
      process.exit(2);
    }
    values[name] = value;
    i++;
  }
  return values;
}

const options = parse(process.argv.slice(2));
let failed = 0;
for (let run = 0; run < options.runs; run++) {
  const seed = options.seed + run;
  const result = await runMinInsync({ seed, leaseMs: options.leaseMs, scanIntervalMs: options.scanIntervalMs, recordsBefore: options.records, recordsAfter: 5 });
  const stalled = result.resumedAfterMs.some((ms) => ms === null);
  const bad = stalled || result.verdict.lost.length + result.verdict.duplicated.length + result.verdict.misplaced.length > 0;
  if (bad) failed++;
  console.log(`run ${run + 1} seed ${seed}: killed broker ${result.victim}; resumed after ${result.resumedAfterMs.map((ms) => (ms === null ? 'never' : `${ms} ms`)).join(', ')} (bound ${result.boundMs} ms); ${describeVerdict(result.verdict)}${bad ? ' FAILED' : ''}`);
  if (bad) console.log(result.output);
}
console.log(`${options.runs - failed} of ${options.runs} runs held`);
process.exit(failed === 0 ? 0 : 1);
