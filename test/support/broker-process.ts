// A `ferry broker` as a real child process, for black-box fault runs: start it on a fixed port (so
// clients reconnect to the same address after a restart), kill -9 it, SIGTERM it, pause it with
// SIGSTOP and resume it with SIGCONT, and restart it with the same arguments and data directory.
import type { Subprocess } from 'bun';
import { freeLoopbackPort } from '../../bench/lib/child-processes.ts';

const CLI = `${import.meta.dir}/../../src/cli.ts`;
/** How long a broker may take to say it listens (start-up rebuilds partitions; CI machines are shared). */
const READY_TIMEOUT_MS = 60_000;
/** Lines of a broker's output kept for a failure message. */
const OUTPUT_LINES_MAX = 400;
/** Of those, the lines of each broker a fault run's failure shows. */
const FAILURE_OUTPUT_LINES = 40;

export interface BrokerProcessOptions {
  readonly nodeId: number;
  /** The data directory (kept across restarts). */
  readonly data: string;
  /** Further `ferry broker` flags: --wal-store, --cluster-store, --lease-ms, ... */
  readonly args?: readonly string[];
  /** Extra environment for the child. */
  readonly env?: Readonly<Record<string, string>>;
  /** Run the broker with at most this many open file descriptors (`ulimit -n`). */
  readonly fdLimit?: number;
  /**
   * How it is started: `bun src/cli.ts broker` (default), or `npm start -- ...` as a supervisor
   * would (then kill() and terminate() signal npm, the process the supervisor holds).
   */
  readonly launcher?: 'bun' | 'npm start';
}

/** The repository, where `npm start` runs. */
const REPOSITORY = `${import.meta.dir}/../..`;

/** One broker process; `port` stays the same across restarts. */
export class BrokerProcess {
  readonly options: BrokerProcessOptions;
  readonly port = freeLoopbackPort();
  #child: Subprocess<'ignore', 'pipe', 'pipe'> | null = null;
  readonly #output: string[] = [];

  constructor(options: BrokerProcessOptions) {
    this.options = options;
  }

  get bootstrap(): string {
    return `127.0.0.1:${this.port}`;
  }

  /** The broker's process id while it runs (to read its CPU time from /proc). */
  get pid(): number | null {
    return this.running ? this.#child!.pid : null;
  }

  get running(): boolean {
    return this.#child !== null && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** The broker's last output lines (stdout and stderr), for failure messages. */
  output(): string {
    return this.#output.join('\n');
  }

  /** Starts the broker and resolves once it listens. */
  async start(): Promise<void> {
    if (this.running) throw new Error(`broker ${this.options.nodeId} is already running`);
    const args = ['broker', '--node-id', String(this.options.nodeId), '--listen', this.bootstrap, '--data', this.options.data, '--metrics', 'off', ...(this.options.args ?? [])];
    const command = this.options.launcher === 'npm start' ? ['npm', 'start', '--silent', '--', ...args.slice(1)] : [process.execPath, CLI, ...args];
    // `exec` keeps the broker the child itself, so signals reach it and not a shell.
    const limited = this.options.fdLimit === undefined ? command : ['bash', '-c', `ulimit -n ${this.options.fdLimit} && exec "$@"`, 'bash', ...command];
    const child = Bun.spawn(limited, { cwd: REPOSITORY, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe', env: { ...process.env, npm_config_update_notifier: 'false', ...this.options.env } });
    this.#child = child;
    const ready = new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`broker ${this.options.nodeId} not listening after ${READY_TIMEOUT_MS} ms:\n${this.output()}`)), READY_TIMEOUT_MS);
      const onLine = (line: string) => {
        this.#remember(line);
        if (line.includes(`listening on ${this.bootstrap}`)) {
          clearTimeout(timer);
          resolve();
        }
      };
      void drain(child.stdout, onLine);
      void drain(child.stderr, (line) => this.#remember(line));
      void child.exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`broker ${this.options.nodeId} exited (${code ?? child.signalCode}) before listening:\n${this.output()}`));
      });
    });
    await ready;
  }

  /** kill -9: no flush, no goodbye. Resolves once the process is gone. */
  async kill(): Promise<void> {
    const child = this.#child;
    if (child === null) return;
    child.kill('SIGCONT'); // a paused process must run to die of SIGKILL promptly
    child.kill('SIGKILL');
    await child.exited;
  }

  /** SIGTERM: a clean stop (flush the WAL, resign the lease). Resolves with the exit code. */
  async terminate(): Promise<number | null> {
    const child = this.#child;
    if (child === null) return null;
    child.kill('SIGTERM');
    return await child.exited;
  }

  /** SIGSTOP: the process is frozen (its lease stops being renewed, its sockets stay open). */
  pause(): void {
    this.#child?.kill('SIGSTOP');
  }

  /** SIGCONT after pause(). */
  resume(): void {
    this.#child?.kill('SIGCONT');
  }

  async restart(): Promise<void> {
    if (this.running) await this.kill();
    await this.start();
  }

  #remember(line: string): void {
    this.#output.push(line);
    if (this.#output.length > OUTPUT_LINES_MAX) this.#output.shift();
  }
}

async function drain(stream: ReadableStream<Uint8Array>, onLine: (line: string) => void): Promise<void> {
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of stream) {
    text += decoder.decode(chunk, { stream: true });
    const lines = text.split('\n');
    text = lines.pop()!;
    for (const line of lines) onLine(line);
  }
  if (text !== '') onLine(text);
}

/** Kills every broker, for afterAll. */
export async function killAll(brokers: readonly BrokerProcess[]): Promise<void> {
  await Promise.all(brokers.map((broker) => broker.kill()));
}

/** A fault run's failure, with the last lines each broker wrote: what a seed's post-mortem starts from. */
export function runFailure(seed: number, error: unknown, brokers: readonly BrokerProcess[]): Error {
  const outputs = brokers.map((b) => `--- broker ${b.options.nodeId}\n${b.output().split('\n').slice(-FAILURE_OUTPUT_LINES).join('\n')}`).join('\n');
  return new Error(`seed ${seed}: ${error instanceof Error ? error.message : String(error)}\n${outputs}`);
}
