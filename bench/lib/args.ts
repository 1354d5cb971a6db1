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
