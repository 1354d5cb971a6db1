/**
 * Issue 27's "outside run", reproduced beside the broker bench's own: `npm start`'s broker (fresh
 * working directory, every default, stdout a file or a terminal) kept running while kcat produces
 * 300,000 x 1 KiB (acks=all, linger.ms=5, batch.size=1000000) to it several times in a row (the
 * first run on a cold broker, the next on a warm one, the log growing past a segment roll and
 * tiering as it goes), beside librdkafka's mock cluster in the same rounds. Not a *.bench.ts: it
 * takes minutes and answers one question (why the two measurements differed; bench/README.md).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { KCAT_PRODUCER_CONFIG, kcatProduceFile, writeMessageFile } from './lib/kafka-clients.ts';
import { freeLoopbackPort, processCpuMs, readText, spawnTracked, stopChild, waitForLine, writeBackDirtyPages } from './lib/child-processes.ts';
import { startMockCluster } from './lib/kafka-targets.ts';
import { buildRdkafkaPrograms, findKcat } from './lib/rdkafka-tools.ts';
import { median } from './lib/stats.ts';
import { makeTempDir, removeTempDir } from './lib/temp-dir.ts';
import { formatNumber, KIB_BYTES, mbPerSecond } from './lib/units.ts';

const REPOSITORY_ROOT = join(import.meta.dir, '..');
const MESSAGE_COUNT = 300_000;
const RUNS_PER_BROKER = 4;
const ROUND_COUNT = 2;
const READY_TIMEOUT_MS = 20_000;
const STOP_GRACE_MS = 15_000;
const TOPIC = 't1';

const USAGE = `
bun bench/outside-run.ts [--rounds N] [--runs N]

The issue's outside measurement: \`npm start\`'s broker, kcat -P of ${formatNumber(MESSAGE_COUNT)} x 1 KiB
(acks=all, linger.ms=5, batch.size=1000000) ${RUNS_PER_BROKER} times in a row on one broker, with the
broker's stdout a file (JSON lines) and a terminal (pretty lines, through script(1)), beside the
same kcat runs against librdkafka's mock cluster; ${ROUND_COUNT} rounds. Prints MB/s per run position.
  --rounds N   rounds (default ${ROUND_COUNT})
  --runs N     kcat runs per broker (default ${RUNS_PER_BROKER})`;

interface Server {
  readonly bootstrap: string;
  cpuMs(): number | null;
  stop(): Promise<void>;
}

/** `npm start`'s command in a fresh directory; `terminal` puts its stdout on a pseudo-terminal. */
async function startNpmStartBroker(terminal: boolean): Promise<Server> {
  const directory = makeTempDir('outside-run');
  const output = join(directory, 'broker.out');
  const port = freeLoopbackPort();
  const broker = [process.execPath, join(REPOSITORY_ROOT, 'src', 'cli.ts'), 'broker', '--listen', `127.0.0.1:${port}`, '--metrics', '127.0.0.1:0'];
  const command = terminal ? ['script', '-qfec', `exec ${broker.join(' ')}`, '/dev/null'] : broker;
  const child = spawnTracked(command, { cwd: directory, stdin: terminal ? 'pipe' : 'ignore', stdout: Bun.file(output), stderr: Bun.file(output) });
  await waitForLine(child, output, /listening on 127\.0\.0\.1:\d+/, READY_TIMEOUT_MS, 'ferry broker');
  return {
    bootstrap: `127.0.0.1:${port}`,
    // Under script(1) the broker is script's child: its CPU is the broker's, not script's.
    cpuMs: () => processCpuMs(terminal ? (childOf(child.pid) ?? child.pid) : child.pid),
    stop: async () => {
      try {
        await stopChild(child, (running) => running.kill('SIGTERM'), STOP_GRACE_MS);
      } catch (error) {
        throw new Error(`ferry broker: ${error}\n${readText(output)}`);
      } finally {
        removeTempDir(directory);
      }
    },
  };
}

/** A process's first child (Linux /proc), or null. */
function childOf(pid: number): number | null {
  try {
    const first = readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8').trim().split(' ')[0];
    return first === undefined || first === '' ? null : Number(first);
  } catch {
    return null;
  }
}

interface Series {
  readonly name: string;
  readonly start: () => Promise<Server>;
  /** MB/s per run position, one entry per round. */
  readonly byPosition: number[][];
}

function parseCount(argv: readonly string[], flag: string, fallback: number): number {
  const at = argv.indexOf(flag);
  if (at < 0) return fallback;
  const value = Number(argv[at + 1]);
  if (!Number.isInteger(value) || value < 1) throw new Error(`${flag} needs a positive whole number`);
  return value;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  if (argv.includes('--help') || argv.includes('-h')) return console.log(USAGE.trim());
  const rounds = parseCount(argv, '--rounds', ROUND_COUNT);
  const runs = parseCount(argv, '--runs', RUNS_PER_BROKER);
  const kcat = findKcat();
  if (kcat === null) return console.log('outside run: skipped, kcat not found (apt-get install -y kcat)');
  const build = buildRdkafkaPrograms();
  const scratch = makeTempDir('outside-messages');
  const messages = join(scratch, 'messages.txt');
  writeMessageFile(messages, MESSAGE_COUNT, KIB_BYTES);
  const series: Series[] = [
    { name: 'npm start, stdout a file', start: () => startNpmStartBroker(false), byPosition: [] },
    { name: 'npm start, stdout a terminal', start: () => startNpmStartBroker(true), byPosition: [] },
  ];
  if (build.ok) series.push({ name: 'librdkafka mock', start: () => startMockCluster(build.programs.mockCluster, TOPIC), byPosition: [] });
  for (let round = 0; round < rounds; round++) {
    for (const target of series) {
      const server = await target.start();
      const rates: number[] = [];
      try {
        for (let run = 0; run < runs; run++) {
          const cpuBefore = server.cpuMs();
          const result = await kcatProduceFile(kcat, server.bootstrap, TOPIC, messages, KCAT_PRODUCER_CONFIG);
          const cpuAfter = server.cpuMs();
          rates.push(mbPerSecond(MESSAGE_COUNT * KIB_BYTES, result.elapsedMs));
          const cpu = cpuBefore === null || cpuAfter === null ? '' : `, server CPU ${formatNumber((100 * (cpuAfter - cpuBefore)) / result.elapsedMs)}%`;
          console.error(`  round ${round + 1}: ${target.name}: run ${run + 1}: ${formatNumber(rates.at(-1)!, 1)} MB/s${cpu}`);
        }
      } finally {
        await server.stop();
        writeBackDirtyPages();
      }
      target.byPosition.push(rates);
    }
  }
  const mock = series.find((target) => target.name === 'librdkafka mock');
  console.log(`\nkcat -P, ${formatNumber(MESSAGE_COUNT)} x 1 KiB per run, ${runs} runs in a row per broker, medians over ${rounds} rounds (MB/s; x mock: same position)`);
  for (let run = 0; run < runs; run++) {
    const cells = series.map((target) => {
      const rate = median(target.byPosition.map((rates) => rates[run]!));
      const ratio = mock === undefined || target === mock ? '' : ` (${formatNumber(rate / median(mock.byPosition.map((rates) => rates[run]!)), 2)}x mock)`;
      return `${target.name}: ${formatNumber(rate, 1)}${ratio}`;
    });
    console.log(`  run ${run + 1} (log at ${formatNumber((run * MESSAGE_COUNT * KIB_BYTES) / 1e6)} MB): ${cells.join('; ')}`);
  }
}

await main();
