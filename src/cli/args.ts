import { parseArgs } from 'node:util';

/** Bad command-line input (exit code 2), or a refusal to run (its own code): printed in one line, without a stack trace. */
export class CliError extends Error {
  readonly exitCode: number;

  constructor(message: string, exitCode = 2) {
    super(message);
    this.exitCode = exitCode;
  }
}

type OptionSpec = { type: 'string' | 'boolean'; short?: string; default?: string | boolean };

export interface ParsedArgs {
  readonly values: { readonly [name: string]: string | boolean | undefined };
  readonly positionals: string[];
}

/** parseArgs with `--help` built in and unknown options turned into a CliError; null after help. */
export function parseCommandArgs(args: string[], options: { [name: string]: OptionSpec }, usage: string): ParsedArgs | null {
  let parsed: ParsedArgs;
  try {
    parsed = parseArgs({ args, options: { ...options, help: { type: 'boolean', short: 'h' } }, allowPositionals: true, strict: true });
  } catch (error) {
    throw new CliError(`${(error as Error).message}\n\n${usage}`);
  }
  if (parsed.values.help === true) {
    console.log(usage);
    return null;
  }
  return parsed;
}

/** A positive integer option, with a clear error otherwise. */
export function positiveInteger(name: string, text: string | number | boolean | undefined, fallback: number): number {
  if (text === undefined) return fallback;
  const value = Number(text);
  // a string from a flag or the environment, or a number from a JSON config file
  if ((typeof text !== 'string' && typeof text !== 'number') || !Number.isSafeInteger(value) || value <= 0) throw new CliError(`--${name} must be a positive integer, got '${text}'`);
  return value;
}
