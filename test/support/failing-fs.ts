// Injected disk failures for the local log (issue 9, finding 16): node:fs as the log uses it, with
// the writes and syncs named here failing with ENOSPC (or another errno) while armed. Everything
// passes through untouched when nothing is armed, so the mock is harmless to other tests in the
// same process (bun's mock.module replaces the module for the whole process, live bindings too).
import { mock } from 'bun:test';
import * as fs from 'node:fs';

export type FailingCall = 'writevSync' | 'writeSync' | 'fdatasyncSync' | 'fdatasync';

const real = { ...fs };
const armed = new Map<FailingCall, { errno: string; remaining: number }>();
const calls: { call: FailingCall; position: number | null }[] = [];
let recording = false;

function errnoError(errno: string, call: string): NodeJS.ErrnoException {
  const error: NodeJS.ErrnoException = new Error(`${errno}: ${errno === 'ENOSPC' ? 'no space left on device' : 'injected failure'}, ${call}`);
  error.code = errno;
  error.syscall = call;
  return error;
}

/** Throws (or returns the error for a callback) when `call` is armed; counts it down. */
function injected(call: FailingCall): NodeJS.ErrnoException | null {
  const arm = armed.get(call);
  if (arm === undefined) return null;
  if (--arm.remaining <= 0) armed.delete(call);
  return errnoError(arm.errno, call);
}

mock.module('node:fs', () => ({
  ...real,
  writevSync: (fd: number, buffers: readonly NodeJS.ArrayBufferView[], position?: number | null) => {
    if (recording) calls.push({ call: 'writevSync', position: position ?? null });
    const error = injected('writevSync');
    if (error !== null) throw error;
    return real.writevSync(fd, buffers, position ?? undefined);
  },
  writeSync: (...args: Parameters<typeof fs.writeSync>) => {
    const error = injected('writeSync');
    if (error !== null) throw error;
    return (real.writeSync as (...a: unknown[]) => number)(...args);
  },
  fdatasyncSync: (fd: number) => {
    if (recording) calls.push({ call: 'fdatasyncSync', position: null });
    const error = injected('fdatasyncSync');
    if (error !== null) throw error;
    real.fdatasyncSync(fd);
  },
  fdatasync: (fd: number, callback: (error: NodeJS.ErrnoException | null) => void) => {
    if (recording) calls.push({ call: 'fdatasync', position: null });
    const error = injected('fdatasync');
    if (error !== null) queueMicrotask(() => callback(error));
    else real.fdatasync(fd, callback);
  },
}));

/** Makes the next `count` calls of `call` fail with `errno` (ENOSPC: a full disk). */
export function failNext(call: FailingCall, count = 1, errno = 'ENOSPC'): void {
  armed.set(call, { errno, remaining: count });
}

/** Disarms everything (the disk has room again). */
export function healDisk(): void {
  armed.clear();
}

/** Starts noting the segment writes and syncs made (positions of writes). */
export function recordCalls(): void {
  calls.length = 0;
  recording = true;
}

/** The writes and syncs made since recordCalls, and stops noting them. */
export function takeCalls(): { call: FailingCall; position: number | null }[] {
  recording = false;
  return calls.splice(0);
}
