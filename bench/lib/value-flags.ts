/**
 * Flags that take a value (`--name value` or `--name=value`) for a bench with settings of its
 * own; what is left goes to parseBenchArgs (--quick, --help), which refuses anything unknown.
 */
export interface ValueFlags {
  /** The value given for each flag name (without the dashes); absent names were not given. */
  readonly values: ReadonlyMap<string, string>;
  readonly rest: string[];
}

export function takeValueFlags(argv: readonly string[], names: readonly string[]): ValueFlags {
  const values = new Map<string, string>();
  const rest: string[] = [];
  for (let index = 0; index < argv.length; index++) {
    const arg = argv[index]!;
    const name = names.find((candidate) => arg === `--${candidate}` || arg.startsWith(`--${candidate}=`));
    if (name === undefined) {
      rest.push(arg);
      continue;
    }
    const value = arg.includes('=') ? arg.slice(arg.indexOf('=') + 1) : argv[++index];
    // An empty or missing value is left for parseBenchArgs to refuse as an unknown argument.
    if (value === undefined || value === '') rest.push(`--${name} needs a value`);
    else values.set(name, value);
  }
  return { values, rest };
}

const DECIMAL_SIZE = /^(\d+(?:\.\d+)?)\s*(B|KB|MB|GB|TB)?$/i;
const DECIMAL_UNIT_BYTES: Readonly<Record<string, number>> = { B: 1, KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12 };

/** "100MB" -> 100_000_000 (decimal units, as the bench tables print sizes of produced data). */
export function parseDecimalSize(text: string): number {
  const match = DECIMAL_SIZE.exec(text.trim());
  if (match === null) throw new Error(`not a size: ${JSON.stringify(text)} (write e.g. 100MB or 1GB)`);
  const bytes = Number(match[1]) * DECIMAL_UNIT_BYTES[(match[2] ?? 'B').toUpperCase()]!;
  if (!Number.isSafeInteger(Math.round(bytes)) || bytes <= 0) throw new Error(`not a positive size: ${JSON.stringify(text)}`);
  return Math.round(bytes);
}

export function parsePositiveInteger(name: string, text: string): number {
  const value = Number(text);
  if (!Number.isSafeInteger(value) || value <= 0) throw new Error(`--${name} must be a positive integer, got ${JSON.stringify(text)}`);
  return value;
}
