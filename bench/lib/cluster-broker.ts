/**
 * One `ferry broker` of a cluster a bench runs on loopback: a fixed port (clients find it again
 * after a restart), its own data directory kept across restarts, kill -9 and restart, and the
 * store census (store-census-preload.ts) written beside its output. Each start writes its output
 * to a file of its own, so a crash's log survives the restart that follows it.
 */
import { join, resolve } from 'node:path';
import type { Subprocess } from 'bun';
import { freeLoopbackPort, readText, spawnTracked, stopChild, waitForLine } from './child-processes.ts';
import type { StoreCensus } from './store-census-preload.ts';

const REPOSITORY_ROOT = resolve(import.meta.dir, '..', '..');
const PRELOAD = join(import.meta.dir, 'store-census-preload.ts');
/** A restart rebuilds the partitions it takes over before it may listen; long histories take long. */
const READY_TIMEOUT_MS = 180_000;
const STOP_GRACE_MS = 15_000;

export interface ClusterBrokerOptions {
  readonly nodeId: number;
  readonly directory: string;
  /** Flags every broker of the cluster shares: --wal-store, --cluster-store, --lease-ms, ... */
  readonly args: readonly string[];
}

export class ClusterBroker {
  readonly port = freeLoopbackPort();
  readonly censusFile: string;
  #child: Subprocess | null = null;
  #starts = 0;
  #output = '';

  constructor(readonly options: ClusterBrokerOptions) {
    this.censusFile = join(options.directory, `broker-${options.nodeId}.census.json`);
  }

  get nodeId(): number {
    return this.options.nodeId;
  }

  get bootstrap(): string {
    return `127.0.0.1:${this.port}`;
  }

  get running(): boolean {
    return this.#child !== null && this.#child.exitCode === null && this.#child.signalCode === null;
  }

  /** Starts the broker; resolves once it listens. */
  async start(): Promise<void> {
    if (this.running) throw new Error(`broker ${this.nodeId} is already running`);
    this.#output = join(this.options.directory, `broker-${this.nodeId}.start-${++this.#starts}.out`);
    const data = join(this.options.directory, `broker-${this.nodeId}-data`);
    const command = [
      process.execPath,
      '--preload',
      PRELOAD,
      join(REPOSITORY_ROOT, 'src', 'cli.ts'),
      'broker',
      '--node-id',
      String(this.nodeId),
      '--listen',
      this.bootstrap,
      '--data',
      data,
      '--metrics',
      'off',
      ...this.options.args,
    ];
    const child = spawnTracked(command, {
      cwd: REPOSITORY_ROOT,
      stdin: 'ignore',
      stdout: Bun.file(this.#output),
      stderr: Bun.file(this.#output),
      env: { ...process.env, FERRY_BENCH_STORE_CENSUS: this.censusFile },
    });
    this.#child = child;
    await waitForLine(child, this.#output, new RegExp(`listening on 127\\.0\\.0\\.1:${this.port}\\b`), READY_TIMEOUT_MS, `ferry broker ${this.nodeId}`);
  }

  /** kill -9: no flush, no lease resignation. Resolves once the process is gone. */
  async kill(): Promise<void> {
    if (this.#child === null) return;
    await stopChild(this.#child, (child) => child.kill('SIGKILL'), 0);
  }

  /** SIGTERM, then SIGKILL after a grace period. */
  async stop(): Promise<void> {
    if (this.#child === null) return;
    await stopChild(this.#child, (child) => child.kill('SIGTERM'), STOP_GRACE_MS);
  }

  /** The last start's output, for an error message. */
  output(): string {
    return readText(this.#output);
  }

  /** The census the broker last wrote, or null before its first one. */
  census(): StoreCensus | null {
    const text = readText(this.censusFile);
    if (text === '') return null;
    return JSON.parse(text) as StoreCensus;
  }
}
