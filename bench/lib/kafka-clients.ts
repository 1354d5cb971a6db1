/**
 * Real Kafka clients driven as processes: kcat producing a file of messages (throughput), kcat
 * consuming a partition from its start (fetch throughput) and bench/mock-cluster/ack-latency.c
 * producing at a fixed rate (per-message ack latency).
 * Both are librdkafka, so every server is measured with the same client code.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { spawnTracked } from './child-processes.ts';
import { SeededRandom } from './random.ts';
import { MIB_BYTES } from './units.ts';

const PAYLOAD_SEED = 0xca7;
const NEWLINE = 0x0a;
/** Letters only, so no value contains kcat's message delimiter (newline). */
const ALPHABET = new TextEncoder().encode('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789');
/** Distinct values written, then repeated: enough that no two neighbours are equal. */
const DISTINCT_VALUES = 64;
const WRITE_CHUNK_BYTES = 4 * MIB_BYTES;

/** librdkafka properties as `-X name=value` arguments (kcat and ack-latency take the same form). */
export type ClientConfig = Readonly<Record<string, string>>;

/**
 * The producer every client bench measures and fills with (issue 27's): acks=all, 5 ms linger,
 * batches up to librdkafka's default 1 MB request.
 */
export const KCAT_PRODUCER_CONFIG: ClientConfig = { acks: 'all', 'linger.ms': '5', 'batch.size': '1000000' };

function configArguments(config: ClientConfig): string[] {
  return Object.entries(config).flatMap(([name, value]) => ['-X', `${name}=${value}`]);
}

/** Writes `count` newline-delimited messages of `valueBytes` seeded letters each (kcat -l input). */
export function writeMessageFile(path: string, count: number, valueBytes: number): void {
  const random = new SeededRandom(PAYLOAD_SEED + valueBytes);
  const lineBytes = valueBytes + 1;
  const lines = new Uint8Array(DISTINCT_VALUES * lineBytes);
  for (let index = 0; index < lines.length; index++) lines[index] = ALPHABET[random.nextBelow(ALPHABET.length)]!;
  for (let line = 1; line <= DISTINCT_VALUES; line++) lines[line * lineBytes - 1] = NEWLINE;
  const linesPerChunk = Math.max(DISTINCT_VALUES, Math.floor(WRITE_CHUNK_BYTES / lineBytes / DISTINCT_VALUES) * DISTINCT_VALUES);
  const chunk = new Uint8Array(linesPerChunk * lineBytes);
  for (let at = 0; at < chunk.length; at += lines.length) chunk.set(lines, at);
  const fd = openSync(path, 'wx');
  try {
    for (let written = 0; written < count; written += linesPerChunk) {
      const bytes = Math.min(linesPerChunk, count - written) * lineBytes;
      if (writeSync(fd, chunk, 0, bytes) !== bytes) throw new Error(`short write to ${path}`);
    }
  } finally {
    closeSync(fd);
  }
}

const MICROSECONDS_PER_MS = 1000;

async function run(command: readonly string[], what: string): Promise<{ stdout: string; stderr: string; cpuMs: number }> {
  const child = spawnTracked(command, { stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' });
  const [stdout, stderr, exitCode] = await Promise.all([new Response(child.stdout as ReadableStream).text(), new Response(child.stderr as ReadableStream).text(), child.exited]);
  if (exitCode !== 0) throw new Error(`${what} exited with ${exitCode}: ${command.join(' ')}\n${stderr.trim()}`);
  const cpuMicroseconds = child.resourceUsage()?.cpuTime.total ?? 0n;
  return { stdout, stderr, cpuMs: Number(cpuMicroseconds) / MICROSECONDS_PER_MS };
}

export interface ClientRun {
  /** Wall-clock time from spawn to exit. */
  readonly elapsedMs: number;
  /** The client's CPU time (user + system, all threads). */
  readonly cpuMs: number;
}

/**
 * `kcat -P -l file`: produces every line of `file` as one message to `partition` (0 unless
 * given), waits for every delivery report, exits.
 */
export async function kcatProduceFile(kcat: string, bootstrap: string, topic: string, file: string, config: ClientConfig, partition = 0): Promise<ClientRun> {
  const startMs = performance.now();
  const { stderr, cpuMs } = await run([kcat, '-P', '-q', '-b', bootstrap, '-t', topic, '-p', String(partition), ...configArguments(config), '-l', file], 'kcat -P');
  const elapsedMs = performance.now() - startMs;
  if (/fail|error/i.test(stderr)) throw new Error(`kcat -P reported: ${stderr.trim()}`);
  return { elapsedMs, cpuMs };
}

export interface ConsumeRun extends ClientRun {
  /** Messages kcat printed, and the sum of their value sizes (the check that it read them whole). */
  readonly messages: number;
  readonly valueBytes: number;
}

export interface ConsumeOptions {
  /** The partition read, or null for every partition of the topic. */
  readonly partition: number | null;
  readonly config: ClientConfig;
  /** Exit after this many messages (kcat -c) instead of at the end offset. */
  readonly messageLimit?: number;
}

/**
 * `kcat -C -e -q -o beginning`: reads the partition (or every partition) from its start to its end
 * offset and exits. kcat prints only each message's value size (`-f '%S\n'`), so its output
 * costs little and still proves what it read.
 */
export async function kcatConsume(kcat: string, bootstrap: string, topic: string, options: ConsumeOptions): Promise<ConsumeRun> {
  const partition = options.partition === null ? [] : ['-p', String(options.partition)];
  const limit = options.messageLimit === undefined ? [] : ['-c', String(options.messageLimit)];
  const command = [kcat, '-C', '-e', '-q', '-b', bootstrap, '-t', topic, ...partition, '-o', 'beginning', ...limit, ...configArguments(options.config), '-f', '%S\n'];
  const startMs = performance.now();
  const { stdout, stderr, cpuMs } = await run(command, 'kcat -C');
  const elapsedMs = performance.now() - startMs;
  if (/fail|error/i.test(stderr)) throw new Error(`kcat -C reported: ${stderr.trim()}`);
  let messages = 0;
  let valueBytes = 0;
  for (const line of stdout.split('\n')) {
    if (line === '') continue;
    messages++;
    valueBytes += Number(line);
  }
  return { elapsedMs, cpuMs, messages, valueBytes };
}

/** The partition's end offset (the next offset to be written), from `kcat -Q` (ListOffsets, latest). */
export async function kcatEndOffset(kcat: string, bootstrap: string, topic: string, partition: number, config: ClientConfig = {}): Promise<number> {
  const { stdout } = await run([kcat, '-Q', '-b', bootstrap, ...configArguments(config), '-t', `${topic}:${partition}:-1`], 'kcat -Q');
  const match = / offset (-?\d+)/.exec(stdout);
  if (match === null) throw new Error(`kcat -Q printed no offset: ${stdout.trim()}`);
  return Number(match[1]);
}

export interface AckLatencyRun {
  readonly ratePerSecond: number;
  readonly durationMs: number;
  readonly warmupMs: number;
  readonly valueBytes: number;
  readonly config: ClientConfig;
}

/** Runs the ack-latency program; resolves with each measured message's ack latency in milliseconds. */
export async function ackLatencies(program: string, bootstrap: string, topic: string, settings: AckLatencyRun): Promise<number[]> {
  const command = [program, bootstrap, topic, String(settings.ratePerSecond), String(settings.durationMs), String(settings.valueBytes), String(settings.warmupMs), ...configArguments(settings.config)];
  const { stdout } = await run(command, 'ack-latency');
  const latencies = stdout
    .split('\n')
    .filter((line) => line !== '')
    .map((line) => Number(line) / 1000);
  const expected = Math.floor((settings.ratePerSecond * settings.durationMs) / 1000);
  if (latencies.length !== expected || latencies.some((value) => !Number.isFinite(value))) throw new Error(`ack-latency returned ${latencies.length} latencies, expected ${expected}`);
  return latencies;
}
