// The broker's request path on the simulated network: a real Broker listens on a SimNetwork host,
// under a SimClock, and answers an ApiVersions frame a simulated client sends it. Only the engine's
// directory is real (a temporary one) until the disk is injectable.
import { afterEach, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker } from '../../src/broker/broker.ts';
import { ErrorCode } from '../../src/broker/protocol/error-codes.ts';
import { KafkaReader } from '../../src/broker/protocol/reader.ts';
import { KafkaWriter } from '../../src/broker/protocol/writer.ts';
import { SimNetwork } from '../../src/sim/network.ts';
import { ProcessGate, SimClock, SimScheduler } from '../../src/sim/scheduler.ts';
import { concatBytes } from '../../src/util/bytes.ts';
import type { NetSocket } from '../../src/util/network.ts';
import { SeededRandom } from '../../src/util/random.ts';

const API_VERSIONS_KEY = 18;
const BROKER_HOST = 'broker-1';
const BROKER_PORT = 9092;
/** Simulated ms to let pass per step while waiting for something. */
const STEP_MS = 1;
const STEPS_MAX = 2_000;

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** Runs the simulation a step at a time until `done` (the engine's real file I/O may finish between steps). */
async function runUntil(scheduler: SimScheduler, done: () => boolean): Promise<void> {
  for (let step = 0; step < STEPS_MAX && !done(); step++) await scheduler.run(scheduler.nowMs + STEP_MS);
  expect(done()).toBe(true);
}

function apiVersionsFrame(correlationId: number): Uint8Array {
  const body = concatBytes(new KafkaWriter().int16(API_VERSIONS_KEY).int16(0).int32(correlationId).nullableString('sim-client').chunks());
  const frame = new Uint8Array(4 + body.length);
  new DataView(frame.buffer).setInt32(0, body.length);
  frame.set(body, 4);
  return frame;
}

test('a Broker on a SimNetwork host answers ApiVersions sent over a simulated connection', async () => {
  const scheduler = new SimScheduler(new SeededRandom(42));
  const network = new SimNetwork(scheduler);
  const brokerGate = new ProcessGate(BROKER_HOST);
  const directory = mkdtempSync(join(tmpdir(), 'ferry-sim-broker-'));
  directories.push(directory);

  let broker: Broker | null = null;
  let failure: unknown = null;
  Broker.start({
    listenHost: BROKER_HOST,
    listenPort: BROKER_PORT,
    nodeId: 1,
    engine: { directory },
    clock: new SimClock(scheduler, brokerGate),
    network: network.host(BROKER_HOST, brokerGate),
    random: new SeededRandom(7),
    log: () => {},
  }).then((b) => (broker = b), (error) => (failure = error));
  await runUntil(scheduler, () => broker !== null || failure !== null);
  expect(failure).toBeNull();
  expect(broker!.port).toBe(BROKER_PORT);

  const client = network.host('client', new ProcessGate('client'));
  let received: Uint8Array = new Uint8Array(0);
  let socket: NetSocket | null = null;
  void client.connect(BROKER_HOST, BROKER_PORT, { data: (_s, chunk) => void (received = concatBytes([received, chunk])) }).then((s) => (socket = s));
  await runUntil(scheduler, () => socket !== null);
  socket!.write(apiVersionsFrame(77));
  const answered = () => received.length >= 4 && received.length >= 4 + new DataView(received.buffer, received.byteOffset).getInt32(0);
  await runUntil(scheduler, answered);

  const reader = new KafkaReader(received.subarray(4));
  expect(reader.int32()).toBe(77);
  expect(reader.int16()).toBe(ErrorCode.NONE);
  const apis = reader.int32();
  const keys: number[] = [];
  for (let i = 0; i < apis; i++) {
    keys.push(reader.int16());
    reader.int16();
    reader.int16();
  }
  expect(keys).toContain(API_VERSIONS_KEY);
  expect(keys).toContain(0); // Produce

  const stopped = broker!.stop();
  let done = false;
  void stopped.then(() => (done = true));
  await runUntil(scheduler, () => done);
});
