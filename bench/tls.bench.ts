/**
 * What TLS and SASL cost a producer: kcat producing 1 KiB messages with acks=all to one Ferry
 * broker process through three listeners of it, side by side in one run:
 * - PLAINTEXT: TCP;
 * - SSL: TLS 1.3 (Bun's BoringSSL, an ECDSA P-256 certificate made here with openssl);
 * - SASL_SSL: the same TLS plus SCRAM-SHA-256 (one exchange per connection).
 * Each round runs the three in an order that rotates, on a topic of its own per listener; the
 * ratio columns are the median of the per-round ratios to PLAINTEXT. Then connection setup:
 * N connections each opened, sent ApiVersions (and, SASL_SSL, authenticated) and closed in turn,
 * from this process (Bun's sockets): the handshake's cost, which a client pays once per
 * connection.
 */
import { join } from 'node:path';
import { makeCertificates } from '../test/support/certificates.ts';
import { parseBenchArgs } from './lib/args.ts';
import { freeLoopbackPort } from './lib/child-processes.ts';
import { type ClientConfig, kcatEndOffset, kcatProduceFile, writeMessageFile, KCAT_PRODUCER_CONFIG } from './lib/kafka-clients.ts';
import { startFerryBroker } from './lib/kafka-targets.ts';
import { findKcat } from './lib/rdkafka-tools.ts';
import { connectAndAskVersions } from './lib/kafka-connect.ts';
import { maxOf, median, minOf, pairedRatios } from './lib/stats.ts';
import { printTable } from './lib/table.ts';
import { makeTempDir, removeTempDir } from './lib/temp-dir.ts';
import { formatNumber, formatSignificant, KIB_BYTES, mbPerSecond } from './lib/units.ts';

const VALUE_BYTES = KIB_BYTES;
const DATA_BYTES = 100_000_000;
const QUICK_DATA_BYTES = 10_000_000;
const ROUND_COUNT = 5;
const QUICK_ROUND_COUNT = 2;
const CONNECTIONS = 200;
const QUICK_CONNECTIONS = 50;
const USER = 'bench';
const PASSWORD = 'bench-secret';

const USAGE = `
bun bench/tls.bench.ts [--quick]

kcat producing 1 KiB messages (acks=all) through a PLAINTEXT, an SSL and a SASL_SSL (SCRAM-SHA-256)
listener of one Ferry broker, rounds alternating; then connection setup per listener.`;

interface Listener {
  readonly name: 'PLAINTEXT' | 'SSL' | 'SASL_SSL';
  readonly port: number;
  readonly client: ClientConfig;
}

async function main(): Promise<void> {
  const { quick } = parseBenchArgs(process.argv.slice(2), USAGE);
  const kcat = findKcat();
  if (kcat === null) {
    console.log('tls bench: skipped, kcat not found (apt-get install -y kcat)');
    return;
  }
  const directory = makeTempDir('tls-bench');
  try {
    const certificates = makeCertificates(join(directory, 'certs'), []);
    const listeners = listenersOf(certificates.caPath);
    const config = join(directory, 'server.properties');
    await Bun.write(config, serverProperties(listeners, certificates.serverPemPath));
    // The SCRAM user goes into the control records of the WAL store before the broker starts.
    const walStore = `file:${join(directory, 'objects')}`;
    await addScramUser(config, walStore);
    const broker = await startFerryBroker({ walStore: () => walStore, extraArguments: ['--config', config], listenersInConfig: true });
    try {
      const file = join(directory, 'messages');
      const count = Math.round((quick ? QUICK_DATA_BYTES : DATA_BYTES) / VALUE_BYTES);
      writeMessageFile(file, count, VALUE_BYTES);
      const seconds = new Map(listeners.map((listener) => [listener.name, [] as number[]]));
      const rounds = quick ? QUICK_ROUND_COUNT : ROUND_COUNT;
      for (let round = 0; round < rounds; round++) {
        for (let i = 0; i < listeners.length; i++) {
          const listener = listeners[(round + i) % listeners.length]!;
          const bootstrap = `127.0.0.1:${listener.port}`;
          const topic = `tls-${listener.name.toLowerCase()}`;
          const before = round === 0 ? 0 : await kcatEndOffset(kcat, bootstrap, topic, 0, listener.client);
          const run = await kcatProduceFile(kcat, bootstrap, topic, file, { ...KCAT_PRODUCER_CONFIG, ...listener.client });
          const after = await kcatEndOffset(kcat, bootstrap, topic, 0, listener.client);
          if (after - before !== count) throw new Error(`${listener.name}: ${after - before} messages landed, ${count} sent`);
          seconds.get(listener.name)!.push(run.elapsedMs / 1000);
        }
      }
      printThroughput(listeners, seconds, count);
      await printConnectionSetup(listeners, certificates.caPath, quick ? QUICK_CONNECTIONS : CONNECTIONS);
    } finally {
      await broker.stop();
    }
  } finally {
    removeTempDir(directory);
  }
}

function listenersOf(caPath: string): Listener[] {
  const tls = { 'ssl.ca.location': caPath };
  return [
    { name: 'PLAINTEXT', port: freeLoopbackPort(), client: {} },
    { name: 'SSL', port: freeLoopbackPort(), client: { 'security.protocol': 'SSL', ...tls } },
    { name: 'SASL_SSL', port: freeLoopbackPort(), client: { 'security.protocol': 'SASL_SSL', 'sasl.mechanisms': 'SCRAM-SHA-256', 'sasl.username': USER, 'sasl.password': PASSWORD, ...tls } },
  ];
}

function serverProperties(listeners: readonly Listener[], keystore: string): string {
  return [
    `listeners=${listeners.map((listener) => `${listener.name}://127.0.0.1:${listener.port}`).join(',')}`,
    'ssl.keystore.type=PEM',
    `ssl.keystore.location=${keystore}`,
    'sasl.enabled.mechanisms=SCRAM-SHA-256',
    '',
  ].join('\n');
}

async function addScramUser(config: string, walStore: string): Promise<void> {
  const child = Bun.spawn(
    [process.execPath, join(import.meta.dir, '..', 'src', 'cli.ts'), 'users', 'add', USER, '--mechanism', 'SCRAM-SHA-256', '--config', config, '--wal-store', walStore, '--create-store'],
    {
      stdin: new TextEncoder().encode(`${PASSWORD}\n`),
      stdout: 'pipe',
      stderr: 'pipe',
    },
  );
  if ((await child.exited) !== 0) throw new Error(`ferry users add failed: ${await new Response(child.stderr).text()}`);
}

function printThroughput(listeners: readonly Listener[], seconds: ReadonlyMap<string, number[]>, count: number): void {
  const bytes = count * VALUE_BYTES;
  const plain = seconds.get('PLAINTEXT')!;
  const rows = listeners.map((listener) => {
    const runs = seconds.get(listener.name)!;
    const ratios = pairedRatios(plain, runs); // plain time / this time = this throughput / plain throughput
    return [listener.name, formatSignificant(mbPerSecond(bytes, median(runs) * 1000)), formatSignificant(median(ratios)), `${formatSignificant(minOf(ratios))}-${formatSignificant(maxOf(ratios))}`];
  });
  printTable(
    `kcat -P, ${formatNumber(count)} x 1 KiB, acks=all, ${plain.length} rounds (median)`,
    [{ title: 'listener', align: 'left' }, { title: 'MB/s' }, { title: 'x PLAINTEXT' }, { title: 'range' }],
    rows,
  );
}

/** Opens `count` connections one after another per listener, each answering one ApiVersions (SASL_SSL: after SCRAM), and reports connections per second. */
async function printConnectionSetup(listeners: readonly Listener[], caPath: string, count: number): Promise<void> {
  const rows = [];
  for (const listener of listeners) {
    const started = performance.now();
    for (let i = 0; i < count; i++) await connectAndAskVersions(listener.name, listener.port, caPath, USER, PASSWORD);
    const perSecondValue = count / ((performance.now() - started) / 1000);
    rows.push([listener.name, formatSignificant(perSecondValue), formatSignificant(1000 / perSecondValue)]);
  }
  printTable(`connection setup, ${count} in turn (connect, TLS, SASL, ApiVersions, close)`, [{ title: 'listener', align: 'left' }, { title: 'connections/s' }, { title: 'ms each' }], rows);
}

await main();
