#!/usr/bin/env bun
/** `ferry <command>`: the command-line face of Ferry. Each command lives in src/cli/. */
import { runBroker } from './cli/broker.ts';
import { runCost } from './cli/cost.ts';
import { runDemo } from './cli/demo.ts';
import { runInspect } from './cli/inspect.ts';
import { runUsers } from './cli/users.ts';
import { CliError } from './cli/args.ts';
import { EXIT_FAILURE, EXIT_USAGE, explainFailure, oneLine } from './cli/failure.ts';
import { nearest } from './cli/nearest.ts';
// The version a deployment reports is the package's own: package.json ships in the package ("files" needs no entry for it).
import packageJson from '../package.json' with { type: 'json' };

const USAGE = `ferry: a Kafka-format log whose active segment ships to object storage (KIP-1176)

usage: ferry <command> [options]

commands:
  broker    run a Kafka-protocol broker (kcat, kafkajs, librdkafka) on 127.0.0.1:9092
  demo      run the embedded engine: create a topic, produce, consume, print the numbers
  inspect   summarise a data directory, a partition directory, a segment file or a WAL object
  users     add, remove and list SCRAM users (SASL SCRAM-SHA-256/512)
  cost      a month's bill for a deployment: Ferry on S3 Express + S3 Standard beside classic Kafka
  bench     run the benchmark suite (bench/run.ts; from a clone of the repository)

Run 'ferry <command> --help' for a command's options. 'ferry -V, --version' prints the version.

exit codes: 0 done; ${EXIT_USAGE} a usage error (a bad flag, value, config key or store URL: nothing was
done); ${EXIT_FAILURE} a runtime failure (a port in use, a locked or unwritable data directory, an
unreachable or unsafe store, an unreadable certificate, damaged data). A failure is one line on
stderr, 'ferry <command>: what; what to do'; FERRY_DEBUG=1 prints any failure's stack trace too.`;

/** The flag that moves each command's data directory: the advice about a locked or full one names it. */
const DATA_FLAGS: Readonly<Record<string, string>> = { broker: '--data', users: '--data', demo: '--dir' };

const commands: Record<string, (args: string[]) => Promise<void>> = {
  broker: runBroker,
  cost: runCost,
  demo: runDemo,
  inspect: runInspect,
  users: runUsers,
  bench: async (args) => {
    const suite = `${import.meta.dir}/../bench/run.ts`;
    // The package carries src/ only: the suite (and its clients and fixtures) lives in a checkout.
    if (!(await Bun.file(suite).exists())) throw new CliError('the benchmark suite is not in the installed package; run it from a clone of the repository: npm install && npm run bench', 1);
    const child = Bun.spawn([process.execPath, suite, ...args], { stdio: ['inherit', 'inherit', 'inherit'] });
    process.exitCode = await child.exited;
  },
};

async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(USAGE);
    return;
  }
  if (name === '--version' || name === '-V') {
    console.log(`ferry ${packageJson.version}`);
    return;
  }
  const command = commands[name];
  if (command === undefined) {
    const suggestion = nearest(name, Object.keys(commands));
    throw new CliError(`unknown command '${name}'; ${suggestion === null ? '' : `did you mean '${suggestion}'? `}'ferry --help' lists the commands`);
  }
  await command(rest);
}

/**
 * The one error path of every command: a failure the user can cause is one line and its exit code
 * (failure.ts); anything else is a bug and keeps its stack trace. The exit is immediate, since a
 * command that failed halfway (a broker whose metrics port was taken) may hold timers and sockets.
 */
async function run(argv: string[]): Promise<void> {
  try {
    await main(argv);
  } catch (error) {
    const name = argv[0];
    const known = name !== undefined && name in commands;
    const dataFlag = known ? DATA_FLAGS[name] : undefined;
    const failure = explainFailure(error, dataFlag === undefined ? {} : { dataFlag });
    if (failure === null || process.env.FERRY_DEBUG === '1') console.error(error);
    // console.error writes synchronously, so the line is out before the exit.
    if (failure !== null) console.error(`ferry${known ? ` ${name}` : ''}: ${oneLine(failure.line)}`);
    process.exit(failure?.exitCode ?? EXIT_FAILURE);
  }
}

await run(process.argv.slice(2));
