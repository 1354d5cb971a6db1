/**
 * A read replica in another zone: a second Ferry that follows a leader through the object store
 * they share (the leader's WAL objects), never through the leader, and serves reads from its own
 * disk up to the high watermark: consumers in its zone read without crossing zones.
 *
 *     bun examples/http-producer.ts --data-dir ./zone-a --store ./objects --port 8080   # the leader
 *     bun examples/read-replica.ts --data-dir ./zone-b --store ./objects --port 8081    # the replica
 *     curl -d 'hello' localhost:8080/records && curl localhost:8081/records/0
 */
import { parseArgs } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Ferry } from 'ferry';
import { FileStore } from 'ferry/store';
import { startHttpProducer } from './http-producer.ts';
import { readRecord, RECORD_PATH } from './record-reads.ts';

/** How many records the self-test writes in zone a and reads in zone b. */
const SELF_TEST_RECORDS = 50;
/** How long the self-test waits for the replica to serve the last record (it polls the store every few ms). */
const CATCH_UP_MS_MAX = 15_000;
const CATCH_UP_POLL_MS = 20;

const USAGE = `usage: bun examples/read-replica.ts [--data-dir DIR] [--store DIR] [--follow ID] [--topic NAME] [--port N] [--self-test]

  --data-dir DIR   the replica's own log directory (default ./data-replica)
  --store DIR      the file object store the leader writes its WAL objects to (required unless --self-test)
  --follow ID      the leader's writer id (default zone-a, as examples/http-producer.ts)
  --topic NAME     the topic GET /records/<offset> reads (default events)
  --port N         where to listen on 127.0.0.1 (default 8081; 0 picks a free port)
  --self-test      run examples/http-producer.ts as the leader and a replica beside it, in temporary
                   directories sharing one store; post to the leader, read every record from the replica`;

/** What the replica needs to start. */
export interface ReadReplicaOptions {
  readonly dataDir: string;
  readonly storeDir: string;
  readonly leaderWriterId: string;
  readonly topic: string;
  readonly port: number;
}

/** A running replica: where it serves reads, and how to stop it. */
export interface ReadReplica {
  readonly url: string;
  stop(): Promise<void>;
}

/** Opens a follower engine on `dataDir` that rebuilds the leader's partitions from the store, and serves GET /records/<offset>. */
export async function startReadReplica(options: ReadReplicaOptions): Promise<ReadReplica> {
  const store = await FileStore.open(options.storeDir);
  const ferry = await Ferry.open({ directory: options.dataDir, follow: { store, writerId: options.leaderWriterId } });
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: options.port,
    fetch(request) {
      const read = RECORD_PATH.exec(new URL(request.url).pathname);
      if (request.method !== 'GET' || read === null) return new Response('GET /records/<offset>\n', { status: 404 });
      return readRecord(ferry, options.topic, Number(read[1]));
    },
  });
  return {
    url: `http://127.0.0.1:${server.port}`,
    async stop() {
      await server.stop(true);
      await ferry.close();
      await store.close();
    },
  };
}

/** Waits until `url` answers 200, polling; the body then. */
async function readWhenThere(url: string): Promise<string> {
  const deadline = Date.now() + CATCH_UP_MS_MAX;
  while (Date.now() < deadline) {
    const answer = await fetch(url);
    if (answer.ok) return answer.text();
    await Bun.sleep(CATCH_UP_POLL_MS);
  }
  throw new Error(`${url} was not served within ${CATCH_UP_MS_MAX} ms`);
}

/** Zone a takes SELF_TEST_RECORDS posts; zone b, sharing only the store, serves each of them. */
async function selfTest(root: string): Promise<void> {
  const storeDir = join(root, 'objects');
  const leader = await startHttpProducer({ dataDir: join(root, 'zone-a'), storeDir, writerId: 'zone-a', topic: 'events', port: 0 });
  const replica = await startReadReplica({ dataDir: join(root, 'zone-b'), storeDir, leaderWriterId: 'zone-a', topic: 'events', port: 0 });
  try {
    const bodies = new Map<number, string>();
    for (let index = 0; index < SELF_TEST_RECORDS; index++) {
      const body = `order ${index}`;
      const { offset } = (await (await fetch(`${leader.url}/records`, { method: 'POST', body })).json()) as { offset: number };
      bodies.set(offset, body);
    }
    const started = Date.now();
    for (const [offset, body] of bodies) {
      const served = await readWhenThere(`${replica.url}/records/${offset}`);
      if (served !== body) throw new Error(`the replica served ${JSON.stringify(served)} at ${offset}, not ${JSON.stringify(body)}`);
    }
    console.log(`self-test passed: ${bodies.size} records posted in zone a, all read from the replica in zone b (caught up in ${Date.now() - started} ms)`);
  } finally {
    await replica.stop();
    await leader.stop();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'data-dir': { type: 'string' },
      store: { type: 'string' },
      follow: { type: 'string' },
      topic: { type: 'string' },
      port: { type: 'string' },
      'self-test': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) return console.log(USAGE);
  if (values['self-test'] === true) {
    const root = values['data-dir'] === undefined ? mkdtempSync(join(tmpdir(), 'ferry-replica-')) : resolve(values['data-dir']);
    try {
      return await selfTest(root);
    } finally {
      if (values['data-dir'] === undefined) rmSync(root, { recursive: true, force: true });
    }
  }
  if (values.store === undefined) throw new Error(`--store is required\n${USAGE}`);
  const replica = await startReadReplica({
    dataDir: resolve(values['data-dir'] ?? './data-replica'),
    storeDir: resolve(values.store),
    leaderWriterId: values.follow ?? 'zone-a',
    topic: values.topic ?? 'events',
    port: Number(values.port ?? 8081),
  });
  console.log(`replica of ${values.follow ?? 'zone-a'} serving GET ${replica.url}/records/<offset>; Ctrl-C stops`);
  await new Promise((stopped) => process.once('SIGINT', stopped).once('SIGTERM', stopped));
  await replica.stop();
}

if (import.meta.main) await main();
