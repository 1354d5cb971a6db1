/**
 * The Java properties file format (java.util.Properties.load), as Kafka reads server.properties:
 * - a natural line ends at \n, \r or \r\n; leading spaces, tabs and form feeds are skipped;
 * - a line whose first other character is `#` or `!` is a comment; blank lines are skipped;
 * - a line ending in an odd number of backslashes continues on the next one (its leading
 *   whitespace skipped); a comment line never continues;
 * - the key ends at the first unescaped `=`, `:` or whitespace; whitespace, then at most one `=`
 *   or `:`, then whitespace separate it from the value, which is the rest of the line;
 * - in keys and values `\t \n \r \f \uXXXX` are escapes and a backslash before any other
 *   character stands for that character (`\=`, `\:`, `\ `, `\\`).
 * A key given twice keeps its last value, as Properties does. Text is read as UTF-8 (Properties
 * reads ISO-8859-1 from a stream, the same for the ASCII that configuration files hold).
 */

/** One key and value, with the line it starts on (1-based) for messages. */
export interface PropertiesEntry {
  readonly key: string;
  readonly value: string;
  readonly line: number;
}

/** A malformed escape: `line` is the 1-based line the entry starts on. */
export class PropertiesError extends Error {
  readonly line: number;

  constructor(line: number, message: string) {
    super(`line ${line}: ${message}`);
    this.line = line;
  }
}

const WHITESPACE = new Set([' ', '\t', '\f']);
const SEPARATORS = new Set(['=', ':']);
/** Hex digits after `\u`. */
const UNICODE_ESCAPE_DIGITS = 4;
const SIMPLE_ESCAPES: Readonly<Record<string, string>> = { t: '\t', n: '\n', r: '\r', f: '\f' };

/** Parses properties text into its entries, in file order, a repeated key keeping its last value. */
export function parseProperties(text: string): PropertiesEntry[] {
  const byKey = new Map<string, PropertiesEntry>();
  for (const { text: line, number } of logicalLines(text)) {
    const entry = splitEntry(line, number);
    byKey.delete(entry.key); // the last occurrence decides the order too
    byKey.set(entry.key, entry);
  }
  return [...byKey.values()];
}

interface LogicalLine {
  readonly text: string;
  readonly number: number;
}

/** Joins continued lines and drops comments and blank lines; the text keeps its escapes. */
function logicalLines(text: string): LogicalLine[] {
  const natural = text.split(/\r\n|\r|\n/);
  const lines: LogicalLine[] = [];
  for (let index = 0; index < natural.length; index++) {
    const number = index + 1;
    let line = skipWhitespace(natural[index]!);
    if (line === '' || line.startsWith('#') || line.startsWith('!')) continue;
    while (endsInEscape(line)) {
      line = line.slice(0, -1);
      index++;
      if (index >= natural.length) break; // a backslash on the last line continues into nothing
      line += skipWhitespace(natural[index]!);
    }
    lines.push({ text: line, number });
  }
  return lines;
}

function skipWhitespace(line: string): string {
  let start = 0;
  while (start < line.length && WHITESPACE.has(line[start]!)) start++;
  return line.slice(start);
}

/** An odd count of trailing backslashes: the last one escapes the line end. */
function endsInEscape(line: string): boolean {
  let count = 0;
  for (let index = line.length - 1; index >= 0 && line[index] === '\\'; index--) count++;
  return count % 2 === 1;
}

function splitEntry(line: string, number: number): PropertiesEntry {
  let keyEnd = 0;
  while (keyEnd < line.length && !WHITESPACE.has(line[keyEnd]!) && !SEPARATORS.has(line[keyEnd]!)) {
    keyEnd += line[keyEnd] === '\\' ? 2 : 1;
  }
  keyEnd = Math.min(keyEnd, line.length);
  let valueStart = keyEnd;
  while (valueStart < line.length && WHITESPACE.has(line[valueStart]!)) valueStart++;
  if (valueStart < line.length && SEPARATORS.has(line[valueStart]!)) valueStart++;
  while (valueStart < line.length && WHITESPACE.has(line[valueStart]!)) valueStart++;
  return { key: unescapeValue(line.slice(0, keyEnd), number), value: unescapeValue(line.slice(valueStart), number), line: number };
}

function unescapeValue(text: string, line: number): string {
  let out = '';
  for (let index = 0; index < text.length; index++) {
    const char = text[index]!;
    if (char !== '\\') {
      out += char;
      continue;
    }
    index++;
    const escaped = text[index];
    if (escaped === undefined) break; // a lone trailing backslash (end of file) stands for nothing
    if (escaped === 'u') {
      const digits = text.slice(index + 1, index + 1 + UNICODE_ESCAPE_DIGITS);
      if (!/^[0-9a-fA-F]{4}$/.test(digits)) throw new PropertiesError(line, `malformed \\uXXXX escape '\\u${digits}'`);
      out += String.fromCharCode(Number.parseInt(digits, 16));
      index += UNICODE_ESCAPE_DIGITS;
      continue;
    }
    out += SIMPLE_ESCAPES[escaped] ?? escaped;
  }
  return out;
}
