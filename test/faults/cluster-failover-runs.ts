// The longer form of black-box run (b): many seeded runs of the cluster failover scenario, with
// a count of each outcome. Usage: bun test/faults/cluster-failover-runs.ts --help
import { readRunArgs } from './run-args.ts';
import { describeResult, passed, runClusterFailover } from './cluster-failover-scenario.ts';

const USAGE = `usage: bun test/faults/cluster-failover-runs.ts [--runs N] [--seed S] [--records N] [--lease-ms N] [--keep]

Three ferry brokers on one file store; a kafkajs idempotent producer (acks=all) on 3 partitions;
kill -9 and restart of a leader; SIGSTOP of a leader past its lease, then SIGCONT. Each run
checks that every acknowledged record is read back once at its acknowledged offset, and that the
paused leader acknowledged nothing missing from the final log or at an offset handed out twice.

  --runs N       runs, seeds S, S+1, ... (default 5)
  --seed S       first seed (default 1)
  --records N    records per phase (default 100)
  --lease-ms N   the brokers' --lease-ms (default 1500)
  --keep         keep each run's data directories
  -h, --help     this text`;

const values = readRunArgs(USAGE, { runs: 5, seed: 1, records: 100, 'lease-ms': 1500, keep: false });
const { runs, seed: firstSeed } = values;
let failures = 0;
const totals = { acknowledged: 0, lost: 0, duplicated: 0, misplaced: 0, twice: 0, pausedAcks: 0, sentAfterStop: 0, takenOver: 0 };
for (let run = 0; run < runs; run++) {
  const result = await runClusterFailover({ seed: firstSeed + run, recordsPerPhase: values.records, leaseMs: values['lease-ms'], keep: values.keep, log: (line) => console.log(`  ${line}`) });
  console.log(`${passed(result) ? 'ok  ' : 'FAIL'} ${describeResult(result)}${values.keep ? ` (${result.directory})` : ''}`);
  if (!passed(result)) failures++;
  totals.acknowledged += result.verdict.acknowledged;
  totals.lost += result.verdict.lost.length;
  totals.duplicated += result.verdict.duplicated.length;
  totals.misplaced += result.verdict.misplaced.length;
  totals.twice += result.offsetsHandedOutTwice.length;
  totals.pausedAcks += result.pausedAcks.afterResume;
  totals.sentAfterStop += result.pausedAcks.sentAfterStop;
  if (result.takenOver) totals.takenOver++;
}
console.log(
  `${runs} runs, ${failures} failed: ${totals.acknowledged} acknowledged, ${totals.lost} lost, ${totals.duplicated} duplicated, ${totals.misplaced} misplaced, ${totals.twice} offsets handed out twice; the paused leader's own client got ${totals.pausedAcks} acknowledgements after SIGCONT (${totals.sentAfterStop} of records sent after SIGSTOP); the paused leader's partition was taken over in ${totals.takenOver} runs`,
);
process.exit(failures === 0 ? 0 : 1);
