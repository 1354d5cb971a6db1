// The long forms' command lines (test/faults/*-runs.ts): numeric and string flags with defaults,
// boolean switches, --help; a bad value is one line naming the flag (exit 2), never a silent NaN.
import { parseArgs } from 'node:util';

export type RunFlags = Readonly<Record<string, number | string | boolean>>;

type Values<T extends RunFlags> = { -readonly [K in keyof T]: T[K] extends number ? number : T[K] extends string ? string : boolean };

/** Reads `flags` (each a number or string default, or `false` for a switch) from argv; --help prints `usage`. */
export function readRunArgs<T extends RunFlags>(usage: string, flags: T): Values<T> {
  const options = Object.fromEntries(Object.entries(flags).map(([name, fallback]) => [name, { type: typeof fallback === 'boolean' ? 'boolean' : 'string' }])) as Record<
    string,
    { type: 'string' | 'boolean' }
  >;
  let parsed: Record<string, string | boolean | undefined>;
  try {
    parsed = parseArgs({ options: { ...options, help: { type: 'boolean', short: 'h' } } }).values as Record<string, string | boolean | undefined>;
  } catch (error) {
    fail(error instanceof Error ? error.message : String(error), usage);
  }
  if (parsed.help === true) {
    console.log(usage);
    process.exit(0);
  }
  const values: Record<string, number | string | boolean> = {};
  for (const [name, fallback] of Object.entries(flags)) {
    const given = parsed[name];
    if (typeof fallback === 'boolean') values[name] = given === true;
    else if (given === undefined) values[name] = fallback;
    else if (typeof fallback === 'string') values[name] = String(given);
    else {
      const value = Number(given);
      if (!Number.isSafeInteger(value) || value < 0) fail(`--${name} must be a non-negative integer, got '${String(given)}'`, usage);
      values[name] = value;
    }
  }
  return values as Values<T>;
}

function fail(message: string, usage: string): never {
  console.error(`${message}\n\n${usage}`);
  process.exit(2);
}
