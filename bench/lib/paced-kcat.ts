/**
 * A producer at a steady rate for a long run: `kcat -P` reading messages from its stdin, fed by
 * this process on a fixed schedule (every TICK_MS, the messages due by then). kcat is librdkafka,
 * the client every other bench uses; the schedule is the bench's, so the rate holds for as long
 * as the run lasts without a message file of its size. A pipe write that blocks (kcat's queue
 * full because the broker is behind) delays the schedule: the messages due meanwhile go out in
 * the next ticks, and `behindMaxMessages` says how far behind the feed ever was. The feed never
 * runs ahead of its schedule.
 */
import type { FileSink, Subprocess } from 'bun';
import { spawnTracked } from './child-processes.ts';
import type { ClientConfig } from './kafka-clients.ts';
import { SeededRandom } from './random.ts';

/** The feed wakes this often (Bun timers fire no sooner than ~1 ms; 10 ms keeps wake-ups cheap). */
const TICK_MS = 10;
/** Distinct values written, then repeated; a block of them is written per pipe write at most. */
const DISTINCT_VALUES = 64;
const NEWLINE = 0x0a;
const PAYLOAD_SEED = 0x50ac;
/** Letters only, so no value contains kcat's message delimiter (newline). */
const ALPHABET = new TextEncoder().encode('abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789');
const MICROSECONDS_PER_MS = 1000;

export interface PacedProduce {
  readonly kcat: string;
  readonly bootstrap: string;
  readonly topic: string;
  readonly messagesPerSecond: number;
  readonly valueBytes: number;
  readonly config: ClientConfig;
}

export interface PacedRunEnd {
  readonly messages: number;
  /** From the first tick to stdin's close: the feed's own time. */
  readonly feedMs: number;
  /** From stdin's close to kcat's exit: the delivery reports still owed at the end. */
  readonly drainMs: number;
  /** The most messages ever due but not yet written into kcat's stdin. */
  readonly behindMaxMessages: number;
  readonly kcatCpuMs: number;
}

/** `DISTINCT_VALUES` newline-terminated values of `valueBytes` seeded letters, back to back. */
function distinctLines(valueBytes: number): Uint8Array {
  const random = new SeededRandom(PAYLOAD_SEED + valueBytes);
  const lineBytes = valueBytes + 1;
  const lines = new Uint8Array(DISTINCT_VALUES * lineBytes);
  for (let index = 0; index < lines.length; index++) lines[index] = ALPHABET[random.nextBelow(ALPHABET.length)]!;
  for (let line = 1; line <= DISTINCT_VALUES; line++) lines[line * lineBytes - 1] = NEWLINE;
  return lines;
}

function configArguments(config: ClientConfig): string[] {
  return Object.entries(config).flatMap(([name, value]) => ['-X', `${name}=${value}`]);
}

export class PacedKcat {
  readonly #settings: PacedProduce;
  readonly #child: Subprocess<'pipe', 'ignore', 'pipe'>;
  readonly #stderr: Promise<string>;
  readonly #lines: Uint8Array;
  readonly #lineBytes: number;
  readonly #feed: Promise<void>;
  #written = 0;
  #behindMax = 0;
  #stopping = false;
  #feedEndMs = 0;
  readonly #startMs: number;

  constructor(settings: PacedProduce) {
    this.#settings = settings;
    const command = [settings.kcat, '-P', '-q', '-b', settings.bootstrap, '-t', settings.topic, '-p', '0', ...configArguments(settings.config)];
    this.#child = spawnTracked(command, { stdin: 'pipe', stdout: 'ignore', stderr: 'pipe' }) as Subprocess<'pipe', 'ignore', 'pipe'>;
    this.#stderr = new Response(this.#child.stderr as ReadableStream).text();
    this.#lines = distinctLines(settings.valueBytes);
    this.#lineBytes = settings.valueBytes + 1;
    this.#startMs = performance.now();
    this.#feed = this.#run();
  }

  /** Messages written into kcat's stdin so far (not yet all acknowledged). */
  get messagesWritten(): number {
    return this.#written;
  }

  /** Messages due by now that are not written yet. */
  get behindMessages(): number {
    return Math.max(0, this.#due(performance.now()) - this.#written);
  }

  /**
   * Stops the feed, closes kcat's stdin and waits for kcat to deliver everything and exit;
   * throws if kcat failed or reported a failed delivery.
   */
  async stop(): Promise<PacedRunEnd> {
    this.#stopping = true;
    await this.#feed;
    const sink = this.#child.stdin as FileSink;
    await sink.end();
    const [stderr, exitCode] = await Promise.all([this.#stderr, this.#child.exited]);
    const drainMs = performance.now() - this.#feedEndMs;
    if (exitCode !== 0) throw new Error(`kcat -P exited with ${exitCode}\n${stderr.trim()}`);
    if (/fail|error/i.test(stderr)) throw new Error(`kcat -P reported: ${stderr.trim()}`);
    const cpuMicroseconds = this.#child.resourceUsage()?.cpuTime.total ?? 0n;
    return { messages: this.#written, feedMs: this.#feedEndMs - this.#startMs, drainMs, behindMaxMessages: this.#behindMax, kcatCpuMs: Number(cpuMicroseconds) / MICROSECONDS_PER_MS };
  }

  #due(nowMs: number): number {
    return Math.floor(((nowMs - this.#startMs) * this.#settings.messagesPerSecond) / 1000);
  }

  async #run(): Promise<void> {
    const sink = this.#child.stdin as FileSink;
    while (!this.#stopping) {
      if (this.#child.exitCode !== null || this.#child.signalCode !== null) throw new Error(`kcat -P exited early (${this.#child.exitCode ?? this.#child.signalCode}): ${(await this.#stderr).trim()}`);
      const due = this.#due(performance.now());
      this.#behindMax = Math.max(this.#behindMax, due - this.#written);
      while (this.#written < due) {
        // Whole lines from the block of distinct values, starting where the last write ended.
        const first = this.#written % DISTINCT_VALUES;
        const count = Math.min(due - this.#written, DISTINCT_VALUES - first);
        sink.write(this.#lines.subarray(first * this.#lineBytes, (first + count) * this.#lineBytes));
        this.#written += count;
      }
      // Waits while the pipe is full: kcat (or the broker behind it) is not keeping up.
      await sink.flush();
      await Bun.sleep(TICK_MS);
    }
    this.#feedEndMs = performance.now();
  }
}
