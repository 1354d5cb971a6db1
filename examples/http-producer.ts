/**
 * A service that produces on HTTP requests: each POST /records appends its body to a topic and
 * answers with the offset once the record is durable (in the object store: acks 'all' waits for
 * the WAL object holding it); GET /records/<offset> reads one back.
 *
 *     bun examples/http-producer.ts --data-dir ./zone-a --store ./objects --port 8080
 *     curl -d 'hello' localhost:8080/records      # {"partition":0,"offset":0}
 *     curl localhost:8080/records/0               # hello
 *
 * examples/read-replica.ts follows it from another zone through the same store.
 */
import { parseArgs } from 'node:util';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Ferry } from 'ferry';
import { FileStore } from 'ferry/store';
import { readRecord, RECORD_PATH } from './record-reads.ts';

/** POST bodies larger than this are refused (413): one record each, well under Ferry's max.message.bytes. */
export const BODY_BYTES_MAX = 512 * 1024;
/** How many records the self-test posts and reads back. */
const SELF_TEST_RECORDS = 20;

const USAGE = `usage: bun examples/http-producer.ts [--data-dir DIR] [--store DIR] [--writer-id ID] [--topic NAME] [--port N] [--self-test]

  --data-dir DIR   the engine's log directory (default ./data-http)
  --store DIR      the file object store the WAL objects go to (default <data-dir>/objects)
  --writer-id ID   this writer's name in WAL keys; a read replica follows it (default zone-a)
  --topic NAME     the topic POSTs go to (default events, one partition)
  --port N         where to listen on 127.0.0.1 (default 8080; 0 picks a free port)
  --self-test      start on a free port (in a temporary directory unless --data-dir), post and read back, stop`;

/** What the service needs to start. */
export interface HttpProducerOptions {
  readonly dataDir: string;
  readonly storeDir: string;
  readonly writerId: string;
  readonly topic: string;
  readonly port: number;
}

/** A running service: where it listens, and how to stop it (the engine closes, the WAL flushed). */
export interface HttpProducer {
  readonly url: string;
  stop(): Promise<void>;
}

/** Opens the engine on `dataDir` shipping to the file store, ensures the topic, and serves HTTP. */
export async function startHttpProducer(options: HttpProducerOptions): Promise<HttpProducer> {
  const store = await FileStore.open(options.storeDir);
  const ferry = await Ferry.open({ directory: options.dataDir, wal: { store, writerId: options.writerId } });
  ferry.ensureTopic(options.topic, { partitions: 1 });
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: options.port,
    maxRequestBodySize: BODY_BYTES_MAX,
    fetch: (request) => route(ferry, options.topic, request),
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

async function route(ferry: Ferry, topic: string, request: Request): Promise<Response> {
  const { pathname } = new URL(request.url);
  if (request.method === 'POST' && pathname === '/records') {
    const body = new Uint8Array(await request.arrayBuffer());
    const [produced] = await ferry.produce(topic, [{ value: body }], { partition: 0, acks: 'all' });
    return Response.json(produced);
  }
  const read = RECORD_PATH.exec(pathname);
  if (request.method === 'GET' && read !== null) return readRecord(ferry, topic, Number(read[1]));
  return new Response('POST /records or GET /records/<offset>\n', { status: 404 });
}

/** Posts SELF_TEST_RECORDS bodies, checks their offsets follow each other, and reads each back. */
async function selfTest(service: HttpProducer): Promise<void> {
  let previous: number | null = null;
  for (let index = 0; index < SELF_TEST_RECORDS; index++) {
    const body = `record ${index} at ${Date.now()}`;
    const answer = await fetch(`${service.url}/records`, { method: 'POST', body });
    if (!answer.ok) throw new Error(`POST answered ${answer.status}: ${await answer.text()}`);
    const { offset } = (await answer.json()) as { offset: number };
    if (previous !== null && offset !== previous + 1) throw new Error(`offset ${offset} does not follow ${previous}`);
    previous = offset;
    const readBack = await (await fetch(`${service.url}/records/${offset}`)).text();
    if (readBack !== body) throw new Error(`GET /records/${offset} answered ${JSON.stringify(readBack)}, not ${JSON.stringify(body)}`);
  }
  console.log(`self-test passed: ${SELF_TEST_RECORDS} records posted, durable and read back, last offset ${previous}`);
}

function optionsFrom(values: Record<string, string | boolean | undefined>, dataDir: string): HttpProducerOptions {
  return {
    dataDir,
    storeDir: resolve(typeof values.store === 'string' ? values.store : join(dataDir, 'objects')),
    writerId: typeof values['writer-id'] === 'string' ? values['writer-id'] : 'zone-a',
    topic: typeof values.topic === 'string' ? values.topic : 'events',
    port: values['self-test'] === true ? 0 : Number(values.port ?? 8080),
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      'data-dir': { type: 'string' },
      store: { type: 'string' },
      'writer-id': { type: 'string' },
      topic: { type: 'string' },
      port: { type: 'string' },
      'self-test': { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help === true) return console.log(USAGE);
  const temporary = values['self-test'] === true && values['data-dir'] === undefined ? mkdtempSync(join(tmpdir(), 'ferry-http-')) : null;
  const service = await startHttpProducer(optionsFrom(values, resolve(temporary ?? values['data-dir'] ?? './data-http')));
  try {
    if (values['self-test'] === true) return await selfTest(service);
    console.log(`listening on ${service.url}: POST /records, GET /records/<offset>; Ctrl-C stops`);
    await new Promise((stopped) => process.once('SIGINT', stopped).once('SIGTERM', stopped));
  } finally {
    await service.stop();
    if (temporary !== null) rmSync(temporary, { recursive: true, force: true });
  }
}

if (import.meta.main) await main();
