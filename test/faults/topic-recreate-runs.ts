// The longer form of run (c) of issue 9 (test/faults/topic-recreate.test.ts is the bounded one):
// many seeded runs of "a topic deleted and created again, then its leader killed", each with its
// own number of deleted incarnations, record counts and moment of the kill.
import { runTopicRecreate } from './topic-recreate-scenario.ts';
import { readRunArgs } from './run-args.ts';

const USAGE = `usage: bun test/faults/topic-recreate-runs.ts [--runs N] [--seed S] [--incarnations N] [--verbose]

Starts three ferry brokers on one file store per run, writes and deletes up to N incarnations of a
topic on one leader, writes the last one with acks=all, kills the leader with SIGKILL and checks
that the survivor serves only the last incarnation's acknowledged records, at their offsets, and
puts the next write right after them. Prints one line per run and exits 1 if any run broke.

options:
  --runs N           runs, seeds S, S+1, ... (default 5)
  --seed S           the first seed (default 1)
  --incarnations N   at most this many deleted incarnations before the last (default 3)
  --verbose          print each run's steps
  -h, --help         this text`;

async function main(): Promise<void> {
  const options = readRunArgs(USAGE, { runs: 5, seed: 1, incarnations: 3, verbose: false });
  let broken = 0;
  for (let seed = options.seed; seed < options.seed + options.runs; seed++) {
    const started = performance.now();
    try {
      const result = await runTopicRecreate({ seed, deletedIncarnationsMax: options.incarnations, ...(options.verbose ? { log: (line: string) => console.log(`  ${line}`) } : {}) });
      const verdict = result.verdict;
      const counts = `${result.deletedIncarnations} deleted incarnations (${result.oldRecords} records), ${verdict.acknowledged} acknowledged, ${verdict.lost.length} lost, ${verdict.duplicated.length} duplicated, ${verdict.misplaced.length} misplaced, ${result.served.length} old served, next at ${result.nextOffset}`;
      const seconds = ((performance.now() - started) / 1000).toFixed(1);
      if (result.problems.length > 0) broken++;
      console.log(`seed ${seed}: ${result.problems.length === 0 ? 'ok' : 'BROKEN'}: ${counts} (${seconds} s)${result.problems.map((p) => `\n  ${p}`).join('')}`);
    } catch (error) {
      broken++;
      console.log(`seed ${seed}: ERROR: ${error instanceof Error ? error.message : String(error)}`);
    }
  }
  console.log(`${options.runs - broken} of ${options.runs} runs held`);
  process.exit(broken === 0 ? 0 : 1);
}

await main();
