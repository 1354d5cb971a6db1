/**
 * What a log line costs: pino (the CLI's logger) and Ferry's own RecordLogger (the library's
 * default and the simulation's), each for a line below the level (what every debug line costs
 * in production) and for a JSON line written synchronously to /dev/null (the write syscall
 * included, no terminal), beside the old path: an ISO timestamp and a template string written
 * the same way (console.log's work without its formatting; a real console.log cannot be pointed
 * at /dev/null from inside the process). Every line names a topic and partition as fields.
 */
import { closeSync, openSync, writeSync } from 'node:fs';
import { bench, do_not_optimize, run } from 'mitata';
import { pino } from 'pino';
import { lineLogger } from '../src/observability/logger.ts';
import { jsonLineSink, RecordLogger } from '../src/observability/record-logger.ts';
import { parseBenchArgs } from './lib/args.ts';
import { printTable } from './lib/table.ts';

const USAGE = `
bun bench/log.bench.ts [--quick]

Times one log line with mitata (~10 s; --quick: the disabled-level and old-path cases, ~4 s):
pino and Ferry's RecordLogger below their level and writing JSON to /dev/null, beside the
old string-callback path. Prints ns per line.`;

const DEV_NULL = '/dev/null';

interface Case {
  readonly label: string;
  readonly quick: boolean;
  readonly line: (offset: number) => void;
}

function cases(fd: number): Case[] {
  const pinoLogger = pino({ level: 'info' }, pino.destination({ dest: DEV_NULL, sync: true })).child({ component: 'tier' });
  const ferryLogger = new RecordLogger(
    'info',
    jsonLineSink((line) => void writeSync(fd, line)),
  ).child({ component: 'tier' });
  const callback = lineLogger(() => {});
  const oldLog = (message: string) => void writeSync(fd, `${new Date().toISOString()} ${message}\n`);
  return [
    { label: 'pino, below the level (debug at info)', quick: true, line: (offset) => pinoLogger.debug({ topic: 'orders', partition: 3, offset }, 'tiered orders-3') },
    { label: 'RecordLogger, below the level', quick: true, line: (offset) => ferryLogger.debug({ topic: 'orders', partition: 3, offset }, 'tiered orders-3') },
    { label: 'callback adapter (lineLogger), no-op callback', quick: true, line: (offset) => callback.info({ topic: 'orders', partition: 3, offset }, 'tiered orders-3') },
    { label: 'pino, JSON line to /dev/null', quick: false, line: (offset) => pinoLogger.info({ topic: 'orders', partition: 3, offset }, 'tiered orders-3') },
    { label: 'RecordLogger, JSON line to /dev/null', quick: false, line: (offset) => ferryLogger.info({ topic: 'orders', partition: 3, offset }, 'tiered orders-3') },
    { label: 'old path: ISO time + template, to /dev/null', quick: true, line: (offset) => oldLog(`tiered orders-3 offsets ${offset}..${offset + 1}`) },
  ];
}

const { quick } = parseBenchArgs(process.argv.slice(2), USAGE);
const fd = openSync(DEV_NULL, 'w');
const chosen = cases(fd).filter((entry) => !quick || entry.quick);
let offset = 0;
for (const entry of chosen) bench(entry.label, () => do_not_optimize(entry.line(offset++)));
const { benchmarks } = await run();
closeSync(fd);
const medianNs = new Map<string, number>();
for (const trial of benchmarks) {
  const stats = trial.runs[0]?.stats;
  if (stats !== undefined) medianNs.set(trial.alias, stats.p50);
}
printTable(
  'One log line, ns (mitata median)',
  [{ title: 'logger', align: 'left' }, { title: 'ns/line' }],
  chosen.map((entry) => {
    const ns = medianNs.get(entry.label);
    return [entry.label, ns === undefined ? '-' : ns.toFixed(1)];
  }),
);
