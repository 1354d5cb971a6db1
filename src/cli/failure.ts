/**
 * The one place a command's failure becomes what the user reads: one line, `<what>; <what to do>`,
 * and an exit code. Every failure a user can cause arrives here as a CliError (bad input), a
 * FerryError (src/errors.ts), a StoreError (src/store/errors.ts) or an operating-system error
 * (`code` EADDRINUSE, EACCES, ENOSPC...). Anything else is a bug: explainFailure returns null and
 * the caller prints its stack trace.
 */
import { FerryError, type FerryErrorKind } from '../errors.ts';
import { StoreError, type StoreErrorKind } from '../store/errors.ts';
import { CliError } from './args.ts';

/** Exit code of a usage error: a bad flag, value, config key or URL. The command did nothing. */
export const EXIT_USAGE = 2;
/** Exit code of a runtime failure: the input was fine, but the machine, a store or the data said no. */
export const EXIT_FAILURE = 1;

/** A failure as the user reads it. */
export interface Failure {
  /** One line: what went wrong; what to do about it. */
  readonly line: string;
  readonly exitCode: number;
}

/** Where the command keeps its data (which flag moves it): named in the advice about locks and disks. */
export interface FailureContext {
  readonly dataFlag?: string;
}

/** The line and exit code for a failure the user can cause; null for a bug (print its trace). */
export function explainFailure(error: unknown, context: FailureContext = {}): Failure | null {
  if (error instanceof CliError) return { line: error.message, exitCode: error.exitCode };
  if (error instanceof FerryError) return ferryFailure(error, context);
  if (error instanceof StoreError) return storeFailure(error);
  const os = osFailure(error, context);
  return os === null ? null : { line: os, exitCode: EXIT_FAILURE };
}

/** The lines of an explained failure are one line: a message that carries a newline (a quoted file) is folded. */
export function oneLine(text: string): string {
  return text.replace(/\s*\n\s*/g, ' ');
}

const FERRY_USAGE_KINDS: ReadonlySet<FerryErrorKind> = new Set(['InvalidArgument', 'InvalidConfig']);

function ferryFailure(error: FerryError, context: FailureContext): Failure {
  const exitCode = FERRY_USAGE_KINDS.has(error.kind) ? EXIT_USAGE : EXIT_FAILURE;
  const advice = ferryAdvice(error, context);
  return { line: advice === null ? error.message : `${error.message}; ${advice}`, exitCode };
}

function ferryAdvice(error: FerryError, context: FailureContext): string | null {
  const elsewhere = context.dataFlag === undefined ? 'another data directory' : `another data directory (${context.dataFlag} DIR)`;
  switch (error.kind) {
    case 'Locked':
      return `stop that process, or give this one ${elsewhere}`;
    case 'Storage':
      return osAdvice(codeOf(error.cause), elsewhere) ?? `check the disk under the data directory, or use ${elsewhere}`;
    case 'CorruptRecord':
    case 'CorruptObject':
      return "stored data is damaged: 'ferry inspect PATH' shows where";
    default:
      return null;
  }
}

const STORE_ADVICE: Partial<Record<StoreErrorKind, string>> = {
  AccessDenied: 'check the credentials (AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY, AWS_PROFILE) and the bucket policy',
  NotFound: 'create the bucket, or fix the store URL',
  Unavailable: "check that the store's endpoint is up and reachable (the s3:// URL's endpoint=, AWS_ENDPOINT_URL)",
  Timeout: "check that the store's endpoint is up and reachable (the s3:// URL's endpoint=, AWS_ENDPOINT_URL)",
  Throttled: 'try again later, or lower the request rate',
};
const STORE_URL_FORMS = 'file:///abs/path, file:rel/path, memory:// or s3://bucket/prefix?region=...';
/** Sources parse errors of a store URL are reported under (src/store/url.ts, s3-config.ts): a usage error. */
const STORE_URL_SOURCES = ['object store URL', 'S3 URL', 'S3 store options'];

function storeFailure(error: StoreError): Failure {
  if (error.kind === 'InvalidArgument' && STORE_URL_SOURCES.some((source) => error.message.startsWith(source))) {
    // Most of these messages already list the schemes ("expected file:, memory: or s3:").
    const advice = error.message.includes('expected') ? '' : `; give a store URL of the form ${STORE_URL_FORMS}`;
    return { line: `${error.message}${advice}`, exitCode: EXIT_USAGE };
  }
  // The SDK's own wording when no credentials are configured at all.
  const noCredentials = error.message.includes('Could not load credentials');
  const advice = noCredentials ? 'set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE' : STORE_ADVICE[error.kind];
  return { line: advice === undefined ? error.message : `${error.message}; ${advice}`, exitCode: EXIT_FAILURE };
}

interface SystemError {
  readonly code: string;
  readonly message: string;
  readonly path?: string;
  readonly address?: string;
  readonly port?: number;
}

/** An operating-system error (node's and Bun's carry `code` E...): its line, or null if it is not one. */
function osFailure(error: unknown, context: FailureContext): string | null {
  const system = asSystemError(error);
  if (system === null) return null;
  const elsewhere = context.dataFlag === undefined ? 'another directory' : `another data directory (${context.dataFlag} DIR)`;
  const subject = subjectOf(system);
  const advice = osAdvice(system.code, elsewhere, subject.isAddress);
  return `${subject.text}: ${describeCode(system)}${advice === null ? '' : `; ${advice}`}`;
}

function asSystemError(error: unknown): SystemError | null {
  if (!(error instanceof Error)) return null;
  const code = codeOf(error);
  if (code === null) return null;
  const record = error as unknown as Record<string, unknown>;
  return {
    code,
    message: error.message,
    ...(typeof record.path === 'string' ? { path: record.path } : {}),
    ...(typeof record.address === 'string' ? { address: record.address } : {}),
    ...(typeof record.port === 'number' ? { port: record.port } : {}),
  };
}

function codeOf(error: unknown): string | null {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code) ? code : null;
}

/** What the error is about: a path, or an address (Bun.serve's error names only the port, in its message). */
function subjectOf(error: SystemError): { text: string; isAddress: boolean } {
  if (error.path !== undefined) return { text: error.path, isAddress: false };
  const port = error.port ?? Number(/port (\d+)/.exec(error.message)?.[1] ?? Number.NaN);
  if (error.address !== undefined || !Number.isNaN(port))
    return { text: `${error.address ?? 'port'}${Number.isNaN(port) ? '' : `${error.address === undefined ? ' ' : ':'}${port}`}`, isAddress: true };
  return { text: error.message, isAddress: false };
}

const CODE_TEXT: Record<string, string> = {
  EADDRINUSE: 'already in use by another process',
  EADDRNOTAVAIL: 'not an address of this machine',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  ENOSPC: 'no space left on the device',
  EDQUOT: 'disk quota exceeded',
  EROFS: 'read-only file system',
  ENOENT: 'no such file or directory',
  ENOTDIR: 'part of the path is a file, not a directory',
  EISDIR: 'is a directory',
  EMFILE: 'too many open files',
  ENFILE: 'too many open files in the system',
};

function describeCode(error: SystemError): string {
  return `${CODE_TEXT[error.code] ?? error.message} (${error.code})`;
}

/** What to do about an OS error code; null when there is nothing better than the message. */
function osAdvice(code: string | null, elsewhere: string, isAddress = false): string | null {
  switch (code) {
    case 'EADDRINUSE':
      return 'stop the process listening there, or choose another port';
    case 'EADDRNOTAVAIL':
      return 'listen on 127.0.0.1, 0.0.0.0 or an address of this machine';
    case 'EACCES':
    case 'EPERM':
      return isAddress ? 'ports below 1024 need privileges: choose a port of 1024 or more' : `make it writable for this user, or use ${elsewhere}`;
    case 'ENOSPC':
    case 'EDQUOT':
      return `free some space, or use ${elsewhere}`;
    case 'EROFS':
      return `use ${elsewhere} on a writable file system`;
    case 'ENOENT':
    case 'ENOTDIR':
    case 'EISDIR':
      return 'check the path';
    case 'EMFILE':
    case 'ENFILE':
      return 'raise the open-file limit (ulimit -n)';
    default:
      return null;
  }
}
