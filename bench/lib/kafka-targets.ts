/**
 * Kafka-protocol servers a client bench produces to, each its own process with a fresh state:
 * a Ferry broker (`bun src/cli.ts broker`, the way `npm start` runs it) and librdkafka's mock
 * cluster (bench/mock-cluster/mock-cluster.c). Separate processes keep the client's CPU and the
 * server's CPU apart, the same for both, and let the server be profiled on its own.
 */
import { join, resolve } from 'node:path';
import type { Subprocess } from 'bun';
import { freeLoopbackPort, processCpuMs, readText, spawnTracked, stopChild, waitForLine } from './child-processes.ts';
import { npmStartEnvironment } from './npm-start.ts';
import { makeTempDir, removeTempDir } from './temp-dir.ts';
import { STAGE_TIMERS_ENV } from '../../src/metrics/stage-timers.ts';

const REPOSITORY_ROOT = resolve(import.meta.dir, '..', '..');
const READY_TIMEOUT_MS = 20_000;
/** `ferry broker`'s --data default, relative to its working directory. */
const DEFAULT_DATA_DIRECTORY = 'data';
/** A Ferry broker flushes its WAL and closes its logs on SIGTERM; give it this long. */
const STOP_GRACE_MS = 15_000;

export interface RunningTarget {
  /** bootstrap.servers for a client. */
  readonly bootstrap: string;
  /** GET this for Prometheus text (Ferry only). */
  readonly metricsUrl: string | null;
  /** CPU time the server process has used so far (ms, all threads); null where /proc is missing. */
  cpuMs(): number | null;
  /** The server's process id: its RSS is read from /proc (bench/lib/rss.ts). */
  readonly pid: number;
  /** The server's data directory (Ferry: its partitions' segment files under `<topic>-<partition>/`, its file: stores); null for an in-memory server. Gone after stop. */
  readonly dataDirectory: string | null;
  /** The CRC32C implementation the server says it chose at start (Ferry's start line); null where it says none. */
  readonly crc32c: string | null;
  stop(): Promise<void>;
}

export interface FerryBrokerOptions {
  /**
   * The broker's --wal-store, given its data directory; absent: none given, so the broker takes
   * its default (file:<data>/objects), as `npm start` does.
   */
  readonly walStore?: (dataDirectory: string) => string;
  /** The broker's --tier-store, given its data directory (a file: one is created: --create-store); absent: the broker's default. */
  readonly tierStore?: (dataDirectory: string) => string;
  /** Write a CPU profile of the broker into this directory when it stops (bun --cpu-prof). */
  readonly cpuProfileDirectory?: string | undefined;
  readonly cpuProfileName?: string;
  /** More `ferry broker` arguments (e.g. --config FILE for listeners with TLS and SASL). */
  readonly extraArguments?: readonly string[];
  /** The config file names the listeners (--listen would move the first): no --listen. */
  readonly listenersInConfig?: boolean;
  /** Run with FERRY_STAGE_TIMERS=1: the broker's metrics then say where its time went (src/metrics/stage-timers.ts). */
  readonly stageTimers?: boolean;
}

/**
 * Starts `bun src/cli.ts broker` as `npm start` does (issue 27: the bench measures the broker
 * `npm start` gives): working directory a fresh one (removed on stop), so that its default
 * ./data is fresh, its environment the one npm start's script sets (npm-start.ts), and no flag
 * but a free loopback port for the listener and the metrics endpoint (on by default, at
 * 127.0.0.1:9644), and what `options` adds. Output goes to a file,
 * so log lines are JSON, as under a service manager.
 */
export async function startFerryBroker(options: FerryBrokerOptions = {}): Promise<RunningTarget> {
  const directory = makeTempDir('ferry-broker');
  const data = join(directory, DEFAULT_DATA_DIRECTORY);
  const output = join(directory, 'broker.out');
  const port = freeLoopbackPort();
  const profile =
    options.cpuProfileDirectory === undefined
      ? []
      : ['--cpu-prof', '--cpu-prof-md', `--cpu-prof-dir=${options.cpuProfileDirectory}`, ...(options.cpuProfileName === undefined ? [] : [`--cpu-prof-name=${options.cpuProfileName}`])];
  const listen = options.listenersInConfig === true ? [] : ['--listen', `127.0.0.1:${port}`];
  const command = [
    process.execPath,
    ...profile,
    join(REPOSITORY_ROOT, 'src', 'cli.ts'),
    'broker',
    ...listen,
    ...(options.walStore === undefined ? [] : ['--wal-store', options.walStore(data)]),
    ...(options.tierStore === undefined ? [] : ['--tier-store', options.tierStore(data), '--create-store']),
    '--metrics',
    '127.0.0.1:0',
    ...(options.extraArguments ?? []),
  ];
  const env = { ...process.env, ...npmStartEnvironment(REPOSITORY_ROOT), ...(options.stageTimers === true ? { [STAGE_TIMERS_ENV]: '1' } : {}) };
  const child = spawnTracked(command, { cwd: directory, env, stdin: 'ignore', stdout: Bun.file(output), stderr: Bun.file(output) });
  try {
    // The start line is a JSON line when stdout is not a terminal: the URL ends at a quote.
    const ready = await waitForLine(child, output, /listening on 127\.0\.0\.1:(\d+) .*metrics on (http:\/\/[^\s"]+)/, READY_TIMEOUT_MS, 'ferry broker');
    return {
      bootstrap: `127.0.0.1:${ready[1]}`,
      metricsUrl: ready[2]!,
      cpuMs: () => processCpuMs(child.pid),
      pid: child.pid,
      dataDirectory: data,
      crc32c: crc32cOfStartLine(readText(output)),
      stop: async () => {
        try {
          const exitedEarly = child.exitCode !== null || child.signalCode !== null;
          const code = await stopChild(child, (running) => running.kill('SIGTERM'), STOP_GRACE_MS);
          if (code !== 0 || exitedEarly) throw new Error(`ferry broker ${exitedEarly ? 'had exited by itself' : 'exited'} with ${code ?? child.signalCode}:\n${readText(output)}`);
        } finally {
          removeTempDir(directory);
        }
      },
    };
  } catch (error) {
    await stopChild(child, (running) => running.kill('SIGKILL'), 0);
    removeTempDir(directory);
    throw error;
  }
}

/**
 * Starts the mock cluster program with `topic` (1 partition unless told), answering every request
 * `ackDelayMs` (whole ms) after it arrives; it runs until its stdin closes.
 */
export async function startMockCluster(program: string, topic: string, partitions = 1, ackDelayMs = 0): Promise<RunningTarget> {
  const directory = makeTempDir('mock-cluster');
  const output = join(directory, 'mock.out');
  const child: Subprocess<'pipe', 'pipe', 'pipe'> = spawnTracked([program, topic, String(partitions), String(ackDelayMs)], {
    stdin: 'pipe',
    stdout: Bun.file(output),
    stderr: Bun.file(output),
  }) as Subprocess<'pipe', 'pipe', 'pipe'>;
  try {
    const ready = await waitForLine(child, output, /^(\S+:\d+)\s*$/m, READY_TIMEOUT_MS, 'mock cluster');
    return {
      bootstrap: ready[1]!,
      metricsUrl: null,
      cpuMs: () => processCpuMs(child.pid),
      pid: child.pid,
      dataDirectory: null,
      crc32c: null,
      stop: async () => {
        try {
          const exitedEarly = child.exitCode !== null || child.signalCode !== null;
          const code = await stopChild(child, () => void child.stdin.end(), STOP_GRACE_MS);
          if (code !== 0 || exitedEarly) throw new Error(`mock cluster ${exitedEarly ? 'had exited by itself' : 'exited'} with ${code ?? child.signalCode}:\n${readText(output)}`);
        } finally {
          removeTempDir(directory);
        }
      },
    };
  } catch (error) {
    await stopChild(child, (running) => running.kill('SIGKILL'), 0);
    removeTempDir(directory);
    throw error;
  }
}

/** The `crc32c` field of a Ferry broker's JSON start line (src/cli/start-fields.ts); null when absent. */
function crc32cOfStartLine(output: string): string | null {
  const line = output.split('\n').find((candidate) => candidate.includes('listening on'));
  if (line === undefined) return null;
  try {
    const fields = JSON.parse(line) as { crc32c?: unknown };
    return typeof fields.crc32c === 'string' ? fields.crc32c : null;
  } catch {
    return null; // not a JSON line (a terminal's pretty line): nothing to read
  }
}
