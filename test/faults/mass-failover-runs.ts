// The longer form of issue 28's black-box run: many seeded kills of the broker leading most of a
// topic's partitions under load. Usage: bun test/faults/mass-failover-runs.ts --help
import { readRunArgs } from './run-args.ts';
import { describeMassFailover, massFailoverPassed, runMassFailover } from './mass-failover-scenario.ts';

const USAGE = `usage: bun test/faults/mass-failover-runs.ts [--runs N] [--seed S] [--partitions N] [--replication-factor N] [--rounds N] [--lease-ms N] [--keep]

Three ferry brokers on one file store; the first, alone when the topic is created, leads all of
its partitions; the others join; a kafkajs idempotent producer (acks=all) sends one record to
every partition per request; kill -9 of the first broker under that load. Each run checks that
every acknowledged record is read back once, at its acknowledged offset.

  --runs N                 runs, seeds S, S+1, ... (default 3)
  --seed S                 first seed (default 1)
  --partitions N           the topic's partitions (default 1000)
  --replication-factor N   1 (rebuilt from the dead stream) or 2 (followers promoted) (default 1)
  --rounds N               requests before the kill and after it (default 10)
  --lease-ms N             the brokers' --lease-ms (default 1500)
  --keep                   keep each run's data directories
  -h, --help               this text`;

const values = readRunArgs(USAGE, { runs: 3, seed: 1, partitions: 1000, 'replication-factor': 1, rounds: 10, 'lease-ms': 1500, keep: false });
let failures = 0;
for (let run = 0; run < values.runs; run++) {
  const result = await runMassFailover({
    seed: values.seed + run,
    partitions: values.partitions,
    replicationFactor: values['replication-factor'],
    roundsBefore: values.rounds,
    roundsAfter: values.rounds,
    leaseMs: values['lease-ms'],
    keep: values.keep,
    log: (line) => console.log(`  ${line}`),
  });
  console.log(`${massFailoverPassed(result) ? 'ok  ' : 'FAIL'} ${describeMassFailover(result)}${values.keep ? ` (${result.directory})` : ''}`);
  if (!massFailoverPassed(result)) failures++;
}
console.log(`${values.runs} runs, ${failures} failed`);
process.exit(failures === 0 ? 0 : 1);
