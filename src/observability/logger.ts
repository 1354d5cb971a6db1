/**
 * Ferry's logger: the shape of pino's (fields first, then the message; `child` binds fields to
 * every later line), declared here so the engine and the broker never import a logging library.
 * The CLI hands in a pino logger (src/cli/log-output.ts); an embedding service may hand in its
 * own pino logger as is, or anything with these methods.
 *
 * Every line carries `component` (bound by the module that logs: wal, follower, tier, broker,
 * cluster, groups, security, store, storage, engine) and, where one partition is concerned,
 * `topic` and `partition` as fields, so lines can be filtered without parsing the message.
 */

/** Pino's levels, lowest first. */
export const LOG_LEVELS = ['trace', 'debug', 'info', 'warn', 'error', 'fatal'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
/** A threshold: a level, or `silent` for none. */
export type LogThreshold = LogLevel | 'silent';
export const LOG_THRESHOLDS: readonly LogThreshold[] = [...LOG_LEVELS, 'silent'];

/** Pino's numbers for the levels, which its JSON lines carry as `level`. */
export const LOG_LEVEL_NUMBERS: Readonly<Record<LogThreshold, number>> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60, silent: Infinity };

/** Structured fields of a line. An Error goes under `err` (pino's convention: its serializer keeps type and message). */
export type LogFields = Readonly<Record<string, unknown>>;

/** One log method: the fields of the line, then what happened, in words. */
export type LogMethod = (fields: LogFields, message: string) => void;

export interface Logger {
  trace: LogMethod;
  debug: LogMethod;
  info: LogMethod;
  warn: LogMethod;
  error: LogMethod;
  fatal: LogMethod;
  /** A logger whose every line also carries `bindings`. */
  child(bindings: LogFields): Logger;
  /** Whether a line at `level` would be written: lets a caller skip building costly fields. */
  isLevelEnabled(level: LogLevel): boolean;
}

/** The old form of a logger: a function given each line's message. */
export type LineCallback = (message: string) => void;

/** A Logger, or the old callback form (every level, the message only). */
export type LoggerOption = Logger | LineCallback;

const ignore: LogMethod = () => {};

/** Writes nothing. */
export const silentLogger: Logger = {
  trace: ignore,
  debug: ignore,
  info: ignore,
  warn: ignore,
  error: ignore,
  fatal: ignore,
  child: () => silentLogger,
  isLevelEnabled: () => false,
};

/**
 * Adapts the old callback form: every line, of any level, hands its message (not its fields) to
 * `callback`. Messages name their partition in words too, so a callback loses no meaning.
 */
export function lineLogger(callback: LineCallback): Logger {
  const say: LogMethod = (_fields, message) => callback(message);
  const logger: Logger = { trace: say, debug: say, info: say, warn: say, error: say, fatal: say, child: () => logger, isLevelEnabled: () => true };
  return logger;
}

/** `option` as a Logger (the callback form adapted), or `fallback` when absent. */
export function loggerOf(option: LoggerOption | undefined, fallback: Logger = silentLogger): Logger {
  if (option === undefined) return fallback;
  return typeof option === 'function' ? lineLogger(option) : option;
}

/** `option` as a Logger with `component` bound (the callback form adapted; silent when absent). */
export function componentLogger(option: LoggerOption | undefined, component: string, fallback: Logger = silentLogger): Logger {
  return loggerOf(option, fallback).child({ component });
}

/** The fields that name a partition. */
export function partitionFields(topic: string, partition: number): { readonly topic: string; readonly partition: number } {
  return { topic, partition };
}
