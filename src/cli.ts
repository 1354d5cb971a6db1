#!/usr/bin/env bun
/** `ferry <command>`: the command-line face of Ferry. Each command lives in src/cli/. */
import { runBroker } from './cli/broker.ts';
import { runDemo } from './cli/demo.ts';
import { runInspect } from './cli/inspect.ts';
import { runUsers } from './cli/users.ts';
import { CliError } from './cli/args.ts';

const USAGE = `ferry: a Kafka-format log whose active segment ships to object storage (KIP-1176)

usage: ferry <command> [options]

commands:
  broker    run a Kafka-protocol broker (kcat, kafkajs, librdkafka) on 127.0.0.1:9092
  demo      run the embedded engine: create a topic, produce, consume, print the numbers
  inspect   print the record batches of a segment file or partition directory
  users     add, remove and list SCRAM users (SASL SCRAM-SHA-256/512)
  bench     run the benchmark suite (bench/run.ts)

Run 'ferry <command> --help' for a command's options.`;

const commands: Record<string, (args: string[]) => Promise<void>> = {
  broker: runBroker,
  demo: runDemo,
  inspect: runInspect,
  users: runUsers,
  bench: async (args) => {
    const child = Bun.spawn([process.execPath, `${import.meta.dir}/../bench/run.ts`, ...args], { stdio: ['inherit', 'inherit', 'inherit'] });
    process.exitCode = await child.exited;
  },
};

async function main(argv: string[]): Promise<void> {
  const [name, ...rest] = argv;
  if (name === undefined || name === '--help' || name === '-h' || name === 'help') {
    console.log(USAGE);
    return;
  }
  const command = commands[name];
  if (command === undefined) throw new CliError(`unknown command '${name}'\n\n${USAGE}`);
  await command(rest);
}

try {
  await main(process.argv.slice(2));
} catch (error) {
  if (!(error instanceof CliError)) throw error;
  console.error(`ferry: ${error.message}`);
  process.exitCode = error.exitCode;
}
