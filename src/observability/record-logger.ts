/**
 * A Logger without a logging library: each line at or above a threshold becomes a LogRecord
 * handed to a sink. The library's default logger (warn and above, JSON lines to stderr), the
 * simulation's (text lines it collects deterministically) and tests' collectors are sinks.
 */
import { type Clock, systemClock } from '../util/clock.ts';
import { LOG_LEVEL_NUMBERS, type LogFields, type Logger, type LogLevel, type LogMethod, type LogThreshold } from './logger.ts';

/** One line: its level, the fields bound by `child` then the line's own (later wins), the message. */
export interface LogRecord {
  readonly level: LogLevel;
  readonly fields: LogFields;
  readonly msg: string;
}

export type LogSink = (record: LogRecord) => void;

export class RecordLogger implements Logger {
  readonly trace: LogMethod;
  readonly debug: LogMethod;
  readonly info: LogMethod;
  readonly warn: LogMethod;
  readonly error: LogMethod;
  readonly fatal: LogMethod;
  readonly #threshold: number;
  readonly #bindings: LogFields;
  readonly #sink: LogSink;

  constructor(threshold: LogThreshold, sink: LogSink, bindings: LogFields = {}) {
    this.#threshold = LOG_LEVEL_NUMBERS[threshold];
    this.#sink = sink;
    this.#bindings = bindings;
    // A level below the threshold gets a no-op: a disabled line costs one call.
    this.trace = this.#method('trace');
    this.debug = this.#method('debug');
    this.info = this.#method('info');
    this.warn = this.#method('warn');
    this.error = this.#method('error');
    this.fatal = this.#method('fatal');
  }

  child(bindings: LogFields): Logger {
    return new RecordLogger(thresholdOf(this.#threshold), this.#sink, { ...this.#bindings, ...bindings });
  }

  isLevelEnabled(level: LogLevel): boolean {
    return LOG_LEVEL_NUMBERS[level] >= this.#threshold;
  }

  #method(level: LogLevel): LogMethod {
    if (!this.isLevelEnabled(level)) return () => {};
    return (fields, msg) => this.#sink({ level, fields: { ...this.#bindings, ...fields }, msg });
  }
}

function thresholdOf(number: number): LogThreshold {
  return (Object.entries(LOG_LEVEL_NUMBERS) as [LogThreshold, number][]).find(([, value]) => value === number)![0];
}

/**
 * A sink writing pino's JSON line shape (`level` as pino's number, `time` in ms since the epoch,
 * the fields, `msg`), so tools reading the CLI's lines read these too.
 */
export function jsonLineSink(write: (line: string) => void, clock: Clock = systemClock): LogSink {
  return (record) => write(`${JSON.stringify({ level: LOG_LEVEL_NUMBERS[record.level], time: clock.nowMs(), ...jsonFields(record.fields), msg: record.msg })}\n`);
}

/** Errors as pino's serializer gives them (type and message; the stack is for a debugger, not a log line). */
export function jsonFields(fields: LogFields): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(fields)) out[key] = value instanceof Error ? { type: value.name, message: value.message } : value;
  return out;
}

/**
 * The library's default: warn and above as JSON lines on stderr. An embedding service that
 * passes no logger still hears of failing disks, store outages and fencing, but not of each
 * takeover or tiered segment (info), which would clutter the service's own output.
 */
export function defaultLogger(clock: Clock = systemClock): Logger {
  return new RecordLogger(
    'warn',
    jsonLineSink((line) => void process.stderr.write(line), clock),
  );
}
