/**
 * Child processes a bench starts (brokers, clients): each one is tracked from spawn to exit and
 * killed when the bench exits, also when it throws or is stopped by SIGINT/SIGTERM, so no broker
 * outlives the run. Only processes spawned here are ever signalled, by their own handle.
 */
import type { Subprocess } from 'bun';
import { readFileSync } from 'node:fs';

const liveChildren = new Set<Subprocess>();
let handlersInstalled = false;
/** Exit status of a process stopped by SIGTERM (128 + signal 15), as shells report it. */
const SIGTERM_EXIT_STATUS = 143;
const LINE_POLL_MS = 20;

function killAll(): void {
  for (const child of liveChildren) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  }
  liveChildren.clear();
}

function installHandlers(): void {
  if (handlersInstalled) return;
  handlersInstalled = true;
  process.on('exit', killAll);
  // temp-dir.ts handles SIGINT by exiting, which runs the exit handler above; SIGTERM likewise.
  process.on('SIGTERM', () => process.exit(SIGTERM_EXIT_STATUS));
}

/** Spawns a tracked child; it leaves the tracked set when it exits. */
export function spawnTracked(command: readonly string[], options: Parameters<typeof Bun.spawn>[1] = {}): Subprocess {
  installHandlers();
  const child = Bun.spawn([...command], options);
  liveChildren.add(child);
  void child.exited.then(() => liveChildren.delete(child));
  return child;
}

/**
 * Ends a child gracefully (`gracefully` sends SIGTERM or closes its stdin), then SIGKILL if it
 * has not exited after `graceMs`. Resolves with its exit code (null when killed by a signal).
 */
export async function stopChild(child: Subprocess, gracefully: (child: Subprocess) => void, graceMs: number): Promise<number | null> {
  if (child.exitCode === null && child.signalCode === null) {
    gracefully(child);
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timedOut = new Promise<'timeout'>((resolve) => (timer = setTimeout(() => resolve('timeout'), graceMs)));
    const outcome = await Promise.race([child.exited, timedOut]);
    clearTimeout(timer);
    if (outcome === 'timeout') child.kill('SIGKILL');
  }
  await child.exited;
  liveChildren.delete(child);
  return child.exitCode;
}

/**
 * Waits until a child's output file holds a line matching `pattern` and returns the match;
 * throws with the file's text if the child exits first or `timeoutMs` passes.
 */
export async function waitForLine(child: Subprocess, outputFile: string, pattern: RegExp, timeoutMs: number, what: string): Promise<RegExpMatchArray> {
  const deadline = performance.now() + timeoutMs;
  for (;;) {
    const text = readText(outputFile);
    const match = pattern.exec(text);
    if (match !== null) return match;
    if (child.exitCode !== null || child.signalCode !== null) throw new Error(`${what} exited (${child.exitCode ?? child.signalCode}) before it was ready:\n${text}`);
    if (performance.now() > deadline) throw new Error(`${what} not ready after ${timeoutMs} ms:\n${text}`);
    await Bun.sleep(LINE_POLL_MS);
  }
}

export function readText(file: string): string {
  try {
    return readFileSync(file, 'utf8');
  } catch {
    return '';
  }
}

/** A TCP port on 127.0.0.1 free a moment ago (for a child that must be told its port up front). */
export function freeLoopbackPort(): number {
  const listener = Bun.listen({ hostname: '127.0.0.1', port: 0, socket: { data() {} } });
  const port = listener.port;
  listener.stop(true);
  return port;
}

/** Linux reports utime and stime in clock ticks of 1/100 s (sysconf(_SC_CLK_TCK) on x86-64 and arm64). */
const CLOCK_TICKS_PER_SECOND = 100;
const UTIME_FIELD = 13;
const STIME_FIELD = 14;

/** CPU time (user + system, all threads) a running process has used so far, in ms; null off Linux or once it is gone. */
export function processCpuMs(pid: number): number | null {
  const stat = readText(`/proc/${pid}/stat`);
  if (stat === '') return null;
  // Fields after the command name, which is in parentheses and may hold spaces.
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  const offset = 2; // fields[0] is field 3 (state)
  const ticks = Number(fields[UTIME_FIELD - offset]) + Number(fields[STIME_FIELD - offset]);
  return Number.isFinite(ticks) ? (ticks * 1000) / CLOCK_TICKS_PER_SECOND : null;
}

/**
 * Writes back every dirty page (sync(1)) before the next server starts: a Ferry broker leaves
 * hundreds of MB of log, WAL and tier files dirty, and their writeback, seconds long, took CPU
 * and disk from whichever server came next (the mock ran at ~290 instead of ~750 MB/s after one).
 */
export function writeBackDirtyPages(): void {
  Bun.spawnSync(['sync']);
}
