// A client suite is a program in the client's own language that runs every operation once
// against a broker and prints one JSON line per operation:
//   {"op": "produce.gzip", "ok": true, "ms": 120, "data": {...}}      the call succeeded: what it saw
//   {"op": "admin.delete_records", "ok": false, "ms": 30, "error": "..."}   the client raised
// The test file asserts Kafka's semantics on each operation's data, one bun test per operation,
// so one failing operation (an API Ferry lacks) does not hide the others.
import { expect } from 'bun:test';

/** One operation's line. */
export interface OperationReport {
  readonly op: string;
  readonly ok: boolean;
  readonly ms: number;
  readonly data?: unknown;
  readonly error?: string;
}

/** Output kept for a failure message. */
const OUTPUT_CHARS_MAX = 4000;

export class SuiteReport {
  readonly #operations = new Map<string, OperationReport>();
  readonly #stderr: string;
  readonly #exit: string;

  private constructor(lines: string, stderr: string, exit: string) {
    for (const line of lines.split('\n')) {
      if (!line.startsWith('{')) continue;
      const report = JSON.parse(line) as OperationReport;
      this.#operations.set(report.op, report);
    }
    this.#stderr = stderr;
    this.#exit = exit;
  }

  /** Runs `command` to its end (killed after `timeoutMs`) and collects its lines. */
  static async run(command: readonly string[], options: { readonly timeoutMs: number; readonly env?: Record<string, string>; readonly cwd?: string }): Promise<SuiteReport> {
    const child = Bun.spawn([...command], { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe', env: { ...process.env, ...options.env }, ...(options.cwd === undefined ? {} : { cwd: options.cwd }) });
    let killed = false;
    const timer = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, options.timeoutMs);
    const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited]);
    clearTimeout(timer);
    return new SuiteReport(stdout, stderr, killed ? `killed after ${options.timeoutMs} ms` : `exit code ${code}`);
  }

  /** Reports collected in-process (a JavaScript client). */
  static of(reports: readonly OperationReport[]): SuiteReport {
    return new SuiteReport(reports.map((report) => JSON.stringify(report)).join('\n'), '', 'in process');
  }

  /** The data of a successful operation; fails the current test with the client's error otherwise. */
  data<T>(op: string): T {
    const report = this.#operations.get(op);
    if (report === undefined) throw new Error(`${op}: not reported (suite ${this.#exit}); stderr:\n${this.#stderr.slice(-OUTPUT_CHARS_MAX)}`);
    if (!report.ok) throw new Error(`${op} failed after ${report.ms} ms: ${report.error}`);
    return report.data as T;
  }

  /** The error of an operation that must fail (a transactional producer on a broker without transactions). */
  failure(op: string): OperationReport {
    const report = this.#operations.get(op);
    if (report === undefined) throw new Error(`${op}: not reported (suite ${this.#exit}); stderr:\n${this.#stderr.slice(-OUTPUT_CHARS_MAX)}`);
    expect(report.ok).toBe(false);
    return report;
  }

  /** One line per operation (op, ok/FAIL, ms, error), printed after the file's tests for a pass/fail table. */
  summary(client: string): string {
    const rows = [...this.#operations.values()].map((r) => `${client}\t${r.op}\t${r.ok ? 'ok' : 'FAIL'}\t${r.ms}ms\t${r.ok ? '' : (r.error ?? '').replace(/\s+/g, ' ').slice(0, 200)}`);
    return rows.join('\n');
  }
}
