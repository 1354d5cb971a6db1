import { parseArgs } from 'node:util';
import { nearest } from './nearest.ts';

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

/**
 * parseArgs with `--help` built in and its errors turned into one-line CliErrors that name the
 * option (and the nearest known one, for a typo); null after help. The command's name comes from
 * the usage's first line (`usage: ferry broker ...`).
 */
export function parseCommandArgs(args: string[], options: { [name: string]: OptionSpec }, usage: string): ParsedArgs | null {
  const allOptions = { ...options, help: { type: 'boolean', short: 'h' } } as const;
  let parsed: ParsedArgs;
  try {
    parsed = parseArgs({ args, options: allOptions, allowPositionals: true, strict: true });
  } catch (error) {
    const command = /^usage: (ferry(?: [a-z]+)?)/.exec(usage)?.[1] ?? 'ferry';
    throw new CliError(parseErrorMessage(error as Error, Object.keys(allOptions), command));
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

/** parseArgs' error (Node's wording, which talks of positional arguments) said in one line that names the option. */
function parseErrorMessage(error: Error, known: readonly string[], command: string): string {
  const option = /'(--?[^' <=]+)/.exec(error.message)?.[1];
  const code = (error as { code?: unknown }).code;
  if (option === undefined) return `${error.message.split('\n')[0]}; '${command} --help' lists the options`;
  if (code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
    const suggestion = option.startsWith('--') ? nearest(option.slice(2), known) : null;
    return `unknown option '${option}'; ${suggestion === null ? '' : `did you mean '--${suggestion}'? `}'${command} --help' lists the options`;
  }
  if (/does not take an argument/.test(error.message)) return `option '${option}' takes no value; write it alone`;
  return `option '${option}' needs a value: ${option} VALUE (${option}=VALUE when the value starts with '-')`;
}
