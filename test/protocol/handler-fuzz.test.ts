import { afterAll, beforeAll, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isFlexible } from '../../src/broker/apis/api.ts';
import { API_CODECS } from '../../src/broker/apis/index.ts';
import { Broker } from '../../src/broker/broker.ts';
import { KafkaWriter } from '../../src/protocol/writer.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { encodeBySchema, loadMessageSchema, randomMessage } from '../support/kafka-message-schema.ts';
import { rawClient } from '../support/raw-client.ts';

/**
 * Review of issue 12: well-formed requests with hostile but legal field values, in every
 * advertised version, sent to a real broker. Kafka answers each (with error codes); a closed
 * connection means a handler threw or the response encoder hit an assert.
 */

const ROUNDS = Number(process.env.FUZZ_ROUNDS ?? 4);
const WAIT_MS = 1500;
let directory: string;
let broker: Broker;

beforeAll(async () => {
  directory = mkdtempSync(join(tmpdir(), 'ferry-fuzz-'));
  broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    engine: { directory, log: { flush: { kind: 'none' } }, wal: { store: new MemoryStore(), writerId: 'broker-1', config: { uploadIntervalMs: 2 } } },
  });
  // The random strings include 'a' and index 0 often: hostile values then meet a real topic.
  await broker.context.topology.createTopic('a', 2, 1);
  await broker.context.engine.produce('a', [{ value: 'x' }, { value: 'y' }], { partition: 0, acks: 'all' });
});

afterAll(async () => {
  await broker.stop();
  rmSync(directory, { recursive: true, force: true });
});

function frame(apiKey: number, version: number, flexible: boolean, body: Uint8Array): Uint8Array {
  const writer = new KafkaWriter().int16(apiKey).int16(version).int32(1).nullableString('fuzz');
  if (flexible) writer.emptyTaggedFields();
  writer.raw(body);
  return Buffer.concat(writer.chunks());
}

test('every well-formed request is answered, never a closed connection', async () => {
  const closed: string[] = [];
  for (const codec of API_CODECS) {
    const schema = loadMessageSchema(`${codec.name}Request`);
    for (let version = codec.minVersion; version <= codec.maxVersion; version++) {
      const random = new SeededRandom(codec.key * 100 + version);
      for (let round = 0; round < ROUNDS; round++) {
        const message = randomMessage(schema, version, random);
        if (codec.name === 'Produce') message.acks = -1;
        const client = await rawClient(broker.port);
        client.send(frame(codec.key, version, isFlexible(codec, version), encodeBySchema(schema, version, message)));
        const deadline = Date.now() + WAIT_MS;
        while (client.responses.length === 0 && !client.closed && Date.now() < deadline) await Bun.sleep(2);
        if (client.closed && client.responses.length === 0)
          closed.push(`${codec.name} v${version} round ${round}: ${JSON.stringify(message, (_k, v) => (v instanceof Uint8Array ? `bytes(${v.length})` : v)).slice(0, 600)}`);
        client.end();
      }
    }
  }
  if (closed.length > 0) console.log(closed.join('\n'));
  expect(closed).toEqual([]);
}, 600_000);
