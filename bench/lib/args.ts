/**
 * Command-line flags shared by every bench: `--quick` (a smaller run, for a smoke check) and
 * `--help`. Anything else is refused, so a typo never silently runs the full bench.
 */
export interface BenchArgs {
  readonly quick: boolean;
}

export function parseBenchArgs(argv: readonly string[], usage: string): BenchArgs {
  let quick = false;
  for (const arg of argv) {
    if (arg === '--quick') {
      quick = true;
    } else if (arg === '--help' || arg === '-h') {
      console.log(usage.trim());
      process.exit(0);
    } else {
      console.error(`unknown argument ${JSON.stringify(arg)}\n\n${usage.trim()}`);
      process.exit(2);
    }
  }
  return { quick };
}

export interface ProfiledBenchArgs extends BenchArgs {
  /** `--cpu-prof DIR` (or `--cpu-prof=DIR`): where a bench writes CPU profiles of the servers it starts. */
  readonly cpuProfileDirectory: string | undefined;
}

/** parseBenchArgs plus `--cpu-prof DIR`, for the benches that start Ferry brokers. */
export function parseProfiledBenchArgs(argv: readonly string[], usage: string): ProfiledBenchArgs {
  const rest: string[] = [];
  let cpuProfileDirectory: string | undefined;
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    if (arg === '--cpu-prof') {
      cpuProfileDirectory = argv[++index];
      if (cpuProfileDirectory === undefined) rest.push('--cpu-prof needs a directory');
    } else if (arg.startsWith('--cpu-prof=')) {
      cpuProfileDirectory = arg.slice('--cpu-prof='.length);
    } else {
      rest.push(arg);
    }
  }
  return { ...parseBenchArgs(rest, usage), cpuProfileDirectory };
}
