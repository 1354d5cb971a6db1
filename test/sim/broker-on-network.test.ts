// The broker's request path on the simulated network: a real Broker listens on a SimNetwork host,
// under a SimClock, and answers frames a simulated client sends it, reaching no real timer,
// randomness or socket (RealTimeTrap). Only the engine's directory is real (a temporary one)
// until the disk is injectable.
import { afterEach, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Broker } from '../../src/broker/broker.ts';
import { ErrorCode } from '../../src/broker/protocol/error-codes.ts';
import { KafkaReader } from '../../src/broker/protocol/reader.ts';
import { KafkaWriter } from '../../src/broker/protocol/writer.ts';
import { SimNetwork } from '../../src/sim/network.ts';
import { ProcessGate, SIM_EPOCH_MS, SimClock, SimScheduler } from '../../src/sim/scheduler.ts';
import { concatBytes } from '../../src/util/bytes.ts';
import type { NetSocket } from '../../src/util/network.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { batchOf } from '../support/batches.ts';
import { RealTimeTrap } from './real-time-trap.ts';

const API_VERSIONS_KEY = 18;
const PRODUCE_KEY = 0;
const PRODUCE_VERSION = 3;
const BROKER_HOST = 'broker-1';
const BROKER_PORT = 9092;
const TOPIC = 'sim-topic';
/** Simulated ms to let pass per step while waiting for something. */
const STEP_MS = 1;
const STEPS_MAX = 2_000;
const SIZE_PREFIX_BYTES = 4;

const directories: string[] = [];
const traps: RealTimeTrap[] = [];
afterEach(() => {
  for (const trap of traps.splice(0)) trap.uninstall();
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** A real event-loop turn, taken before the trap is set: the test's own, for the engine's real file I/O (until the disk is injectable). */
const realTurn = setImmediate;

/** Runs the simulation a step at a time until `done`, letting real file I/O complete between steps. */
async function runUntil(scheduler: SimScheduler, done: () => boolean): Promise<void> {
  for (let step = 0; step < STEPS_MAX && !done(); step++) {
    await scheduler.run(scheduler.nowMs + STEP_MS);
    await new Promise((resolve) => realTurn(resolve));
  }
  expect(done()).toBe(true);
}

function framed(chunks: Uint8Array[]): Uint8Array {
  const body = concatBytes(chunks);
  const frame = new Uint8Array(SIZE_PREFIX_BYTES + body.length);
  new DataView(frame.buffer).setInt32(0, body.length);
  frame.set(body, SIZE_PREFIX_BYTES);
  return frame;
}

function apiVersionsFrame(correlationId: number): Uint8Array {
  return framed(new KafkaWriter().int16(API_VERSIONS_KEY).int16(0).int32(correlationId).nullableString('sim-client').chunks());
}

/** Produce v3, acks=1, one batch to partition 0 of TOPIC. */
function produceFrame(correlationId: number, batch: Uint8Array): Uint8Array {
  const writer = new KafkaWriter().int16(PRODUCE_KEY).int16(PRODUCE_VERSION).int32(correlationId).nullableString('sim-client');
  writer.nullableString(null).int16(1).int32(5_000);
  writer.array([TOPIC], (w, topic) => w.string(topic).array([0], (pw, partition) => pw.int32(partition).nullableBytes(batch)));
  return framed(writer.chunks());
}

/** A broker on a simulated host and a client connected to it; every reach for the real world is trapped from the start. */
async function brokerOnSimNetwork(seed: number) {
  const scheduler = new SimScheduler(new SeededRandom(seed));
  const network = new SimNetwork(scheduler);
  const brokerGate = new ProcessGate(BROKER_HOST);
  const directory = mkdtempSync(join(tmpdir(), 'ferry-sim-broker-'));
  directories.push(directory);
  const trap = new RealTimeTrap();
  traps.push(trap);
  trap.install();

  let broker: Broker | null = null;
  let failure: unknown = null;
  Broker.start({
    listenHost: BROKER_HOST,
    listenPort: BROKER_PORT,
    nodeId: 1,
    engine: { directory },
    clock: new SimClock(scheduler, brokerGate),
    network: network.host(BROKER_HOST, brokerGate),
    random: new SeededRandom(seed + 1),
    log: () => {},
  }).then((b) => (broker = b), (error) => (failure = error));
  await runUntil(scheduler, () => broker !== null || failure !== null);
  expect(failure).toBeNull();

  const client = network.host('client', new ProcessGate('client'));
  let received: Uint8Array = new Uint8Array(0);
  let socket: NetSocket | null = null;
  void client.connect(BROKER_HOST, BROKER_PORT, { data: (_s, chunk) => void (received = concatBytes([received, chunk])) }).then((s) => (socket = s));
  await runUntil(scheduler, () => socket !== null);

  /** Sends one frame and waits for its response; returns the response (after the size prefix) and when it arrived. */
  async function call(frame: Uint8Array): Promise<{ reader: KafkaReader; atMs: number }> {
    received = new Uint8Array(0);
    socket!.write(frame);
    const answered = () => received.length >= SIZE_PREFIX_BYTES && received.length >= SIZE_PREFIX_BYTES + new DataView(received.buffer, received.byteOffset).getInt32(0);
    await runUntil(scheduler, answered);
    return { reader: new KafkaReader(received.subarray(SIZE_PREFIX_BYTES)), atMs: scheduler.nowMs - SIM_EPOCH_MS };
  }

  async function stop(): Promise<void> {
    let done = false;
    void broker!.stop().then(() => (done = true));
    await runUntil(scheduler, () => done);
    trap.uninstall();
  }

  return { broker: broker! as Broker, call, stop, trap };
}

test('a Broker on a SimNetwork host answers ApiVersions sent over a simulated connection', async () => {
  const { broker, call, stop, trap } = await brokerOnSimNetwork(42);
  expect(broker.port).toBe(BROKER_PORT);
  const { reader } = await call(apiVersionsFrame(77));
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
  expect(keys).toContain(PRODUCE_KEY);
  await stop();
  expect(trap.reaches).toEqual([]);
});

/** Produce v3 response: the one partition's error code and base offset. */
function produceAnswer(reader: KafkaReader): { errorCode: number; baseOffset: number } {
  reader.int32(); // correlation id
  expect(reader.arrayLength()).toBe(1);
  expect(reader.string()).toBe(TOPIC);
  expect(reader.arrayLength()).toBe(1);
  expect(reader.int32()).toBe(0);
  return { errorCode: reader.int16(), baseOffset: Number(reader.int64()) };
}

test('produce through the simulated network appends, reaching no real timer, randomness or socket', async () => {
  const { broker, call, stop, trap } = await brokerOnSimNetwork(5);
  broker.context.engine.createTopic(TOPIC, { partitions: 1 }); // draws its topic id from the injected random
  const first = produceAnswer((await call(produceFrame(1, batchOf('a', 3, SIM_EPOCH_MS)))).reader);
  const second = produceAnswer((await call(produceFrame(2, batchOf('b', 2, SIM_EPOCH_MS)))).reader);
  expect(first).toEqual({ errorCode: ErrorCode.NONE, baseOffset: 0 });
  expect(second).toEqual({ errorCode: ErrorCode.NONE, baseOffset: 3 });
  await stop();
  expect(trap.reaches).toEqual([]);
});
