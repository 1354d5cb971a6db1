/**
 * The CLI's logger: pino, writing JSON lines when the output is not a terminal (a service
 * manager, a container, a pipe into a log shipper) and readable lines on one (pino-pretty as a
 * synchronous stream in this thread, not a worker transport: a line is out before the next
 * statement runs, and a crash loses none). The engine and broker see only Ferry's Logger.
 */
import { pino } from 'pino';
import pretty from 'pino-pretty';
import { CliError } from './args.ts';
import { LOG_THRESHOLDS, type Logger, type LogThreshold } from '../observability/logger.ts';

/** `--log-level`'s default: the events an operator looks for, not each request. */
export const LOG_LEVEL_DEFAULT: LogThreshold = 'info';

export interface LogOutputOptions {
  readonly level: LogThreshold;
  /** The file descriptor written to (1: stdout). */
  readonly fd: number;
  /** Readable lines instead of JSON (a terminal). */
  readonly pretty: boolean;
}

/** A pino logger as `options` say. */
export function cliLogger(options: LogOutputOptions): Logger {
  const settings = { level: options.level };
  if (!options.pretty) return pino(settings, pino.destination({ dest: options.fd, sync: true }));
  return pino(settings, pretty({ destination: options.fd, sync: true, colorize: true, translateTime: 'SYS:standard', ignore: 'pid,hostname' }));
}

/** The logger of a command whose lines go to stdout: JSON unless stdout is a terminal. */
export function stdoutLogger(level: LogThreshold): Logger {
  return cliLogger({ level, fd: 1, pretty: process.stdout.isTTY === true });
}

/** Checks a `--log-level` value. */
export function parseLogLevel(value: string, source: string): LogThreshold {
  const level = value.toLowerCase() as LogThreshold;
  if (!LOG_THRESHOLDS.includes(level)) throw new CliError(`${source}: ${JSON.stringify(value)} is not a log level; expected one of ${LOG_THRESHOLDS.join(', ')}`);
  return level;
}
