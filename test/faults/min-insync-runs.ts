#!/usr/bin/env bun
// The longer form of black-box run (d) (test/faults/min-insync.test.ts runs one bounded run).
import { describeVerdict } from '../support/ack-ledger.ts';
import { runMinInsync } from './min-insync-scenario.ts';
import { readRunArgs } from './run-args.ts';

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

const values = readRunArgs(USAGE, { runs: 5, seed: 1, 'lease-ms': 1500, 'scan-interval-ms': 100, records: 20 });
const options = { runs: values.runs, seed: values.seed, leaseMs: values['lease-ms'], scanIntervalMs: values['scan-interval-ms'], records: values.records };
let failed = 0;
for (let run = 0; run < options.runs; run++) {
  const seed = options.seed + run;
  const result = await runMinInsync({ seed, leaseMs: options.leaseMs, scanIntervalMs: options.scanIntervalMs, recordsBefore: options.records, recordsAfter: 5 });
  const stalled = result.resumedAfterMs.some((ms) => ms === null);
  const bad = stalled || result.verdict.lost.length + result.verdict.duplicated.length + result.verdict.misplaced.length > 0;
  if (bad) failed++;
  console.log(
    `run ${run + 1} seed ${seed}: killed broker ${result.victim}; resumed after ${result.resumedAfterMs.map((ms) => (ms === null ? 'never' : `${ms} ms`)).join(', ')} (bound ${result.boundMs} ms); ${describeVerdict(result.verdict)}${bad ? ' FAILED' : ''}`,
  );
  if (bad) console.log(result.output);
}
console.log(`${options.runs - failed} of ${options.runs} runs held`);
process.exit(failed === 0 ? 0 : 1);
