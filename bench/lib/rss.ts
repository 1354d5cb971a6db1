/**
 * Resident set size (RSS) of a process under a bench's load: what the machine really gives it,
 * heap, garbage not yet collected, buffers outside the heap and the runtime itself. Linux's
 * /proc/<pid>/status has VmRSS (now) and VmHWM (the most since start, or since the peak was reset
 * by writing 5 to /proc/<pid>/clear_refs), so a window's true peak is read exactly, however
 * briefly it lasted, and a sampler records the series between. Off Linux, where /proc is missing,
 * a child's RSS is null; the bench's own process still has process.memoryUsage().rss.
 */
import { writeFileSync } from 'node:fs';
import { readText } from './child-processes.ts';
import { median } from './stats.ts';
import { MIB_BYTES } from './units.ts';

/** /proc/<pid>/status gives sizes in kB (KiB, as the kernel counts). */
const STATUS_UNIT_BYTES = 1024;
/** Written to /proc/<pid>/clear_refs, it resets VmHWM to the current RSS (Linux 4.0 and later). */
const RESET_PEAK_COMMAND = '5';

/** One `VmRSS:` or `VmHWM:` line of a process's status, in bytes; null when /proc or the line is missing. */
function statusBytes(pid: number | 'self', field: 'VmRSS' | 'VmHWM'): number | null {
  const match = new RegExp(`^${field}:\\s+(\\d+)\\s+kB$`, 'm').exec(readText(`/proc/${pid}/status`));
  return match === null ? null : Number(match[1]) * STATUS_UNIT_BYTES;
}

/** A process whose RSS a bench reads: now, and the most since its peak was last reset. */
export interface RssSource {
  /** RSS now, in bytes; null where it cannot be read (no /proc, or the process is gone). */
  current(): number | null;
  /** The most RSS since `resetPeak` (or since start); null where the kernel keeps no high-water mark. */
  peak(): number | null;
  /** Starts a new high-water mark at the current RSS; false where that is not possible. */
  resetPeak(): boolean;
}

function resetPeakOf(pid: number | 'self'): boolean {
  try {
    writeFileSync(`/proc/${pid}/clear_refs`, RESET_PEAK_COMMAND);
    return true;
  } catch {
    return false; // no /proc, an older kernel, or not ours to write
  }
}

/** The RSS of a child process (a broker the bench started). */
export function processRss(pid: number): RssSource {
  return { current: () => statusBytes(pid, 'VmRSS'), peak: () => statusBytes(pid, 'VmHWM'), resetPeak: () => resetPeakOf(pid) };
}

/** The bench's own RSS, for in-process benches: process.memoryUsage() works everywhere Bun runs. */
export function ownRss(): RssSource {
  return { current: () => process.memoryUsage().rss, peak: () => statusBytes('self', 'VmHWM'), resetPeak: () => resetPeakOf('self') };
}

export interface RssSample {
  /** Since the sampler started. */
  readonly atMs: number;
  readonly bytes: number;
}

/** What a sampler saw over its window. */
export interface RssWindow {
  /** The most RSS in the window: the kernel's high-water mark when it keeps one, else the largest sample. */
  readonly peakBytes: number;
  readonly medianBytes: number;
  /** The last sample, taken when the window closed. */
  readonly lastBytes: number;
  readonly samples: readonly RssSample[];
}

/**
 * Records a process's RSS every `intervalMs` from `start` to `stop`, and its true peak in between
 * (the high-water mark is reset at start). The timer runs on the bench's event loop: a bench that
 * blocks its loop gets fewer samples, but the peak is the kernel's and misses nothing.
 */
export class RssSampler {
  readonly #source: RssSource;
  readonly #intervalMs: number;
  readonly #samples: RssSample[] = [];
  #startMs = 0;
  #peakReset = false;
  #timer: ReturnType<typeof setInterval> | null = null;

  constructor(source: RssSource, intervalMs: number) {
    this.#source = source;
    this.#intervalMs = intervalMs;
  }

  start(): this {
    this.#startMs = performance.now();
    this.#peakReset = this.#source.resetPeak();
    this.#sample();
    this.#timer = setInterval(() => this.#sample(), this.#intervalMs);
    return this;
  }

  /** Ends the window with a last sample; null when no sample could be read (no /proc). */
  stop(): RssWindow | null {
    if (this.#timer !== null) clearInterval(this.#timer);
    this.#timer = null;
    this.#sample();
    return this.window();
  }

  /** The window so far (a long run reports as it goes); null while there is no sample. */
  window(): RssWindow | null {
    const samples = this.#samples;
    if (samples.length === 0) return null;
    const sampledPeak = samples.reduce((most, sample) => Math.max(most, sample.bytes), 0);
    const kernelPeak = this.#peakReset ? this.#source.peak() : null;
    return { peakBytes: Math.max(sampledPeak, kernelPeak ?? 0), medianBytes: median(samples.map((sample) => sample.bytes)), lastBytes: samples.at(-1)!.bytes, samples: [...samples] };
  }

  #sample(): void {
    const bytes = this.#source.current();
    if (bytes !== null) this.#samples.push({ atMs: performance.now() - this.#startMs, bytes });
  }
}

/** Bytes as MiB, the unit every RSS column and bound prints in. */
export const mib = (bytes: number): number => bytes / MIB_BYTES;
