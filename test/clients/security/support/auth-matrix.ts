// The auth failure matrix the security suite prints after each file's tests (issue 13's note):
// one row per client and scenario with what Kafka answers (as that client reports it) and what
// the client reported against Ferry, so a reader sees at a glance which refusals look exactly
// like Kafka's and which are refused by other words.

/** How an observation compares with Kafka's answer. */
export type Verdict =
  /** As Kafka: served, or refused with Kafka's error as the client shows it. */
  | 'ok'
  /** Refused (nothing reached data), but not with the words Kafka's refusal gives the client. */
  | 'refused, other words'
  /** Served where Kafka refuses, or refused where Kafka serves. */
  | 'FAIL';

export interface MatrixRow {
  readonly client: string;
  readonly scenario: string;
  /** Kafka's answer as the client shows it. */
  readonly expected: string;
  /** What the client showed against Ferry. */
  readonly observed: string;
  readonly verdict: Verdict;
}

/** Characters of an observation kept in the table. */
const OBSERVED_CHARS_MAX = 160;

export class AuthMatrix {
  readonly #title: string;
  readonly #rows: MatrixRow[] = [];

  constructor(title: string) {
    this.#title = title;
  }

  record(row: MatrixRow): void {
    this.#rows.push({ ...row, observed: oneLine(row.observed) });
  }

  get rows(): readonly MatrixRow[] {
    return this.#rows;
  }

  /** A markdown table (client, scenario, expected, observed, verdict), printed after a file's tests. */
  summary(): string {
    const header = ['| client | scenario | expected (Kafka) | observed (Ferry) | verdict |', '|---|---|---|---|---|'];
    const rows = this.#rows.map((row) => `| ${[row.client, row.scenario, row.expected, row.observed, row.verdict].map(cell).join(' | ')} |`);
    return [`auth failure matrix: ${this.#title}`, ...header, ...rows].join('\n');
  }
}

function oneLine(text: string): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > OBSERVED_CHARS_MAX ? `${line.slice(0, OBSERVED_CHARS_MAX)}...` : line;
}

function cell(text: string): string {
  return text.replaceAll('|', '\\|');
}
