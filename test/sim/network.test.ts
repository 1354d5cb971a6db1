import { describe, expect, test } from 'bun:test';
import { CONNECT_TIMEOUT_MS, SimNetwork } from '../../src/sim/network.ts';
import { ProcessGate, SIM_EPOCH_MS, SimScheduler } from '../../src/sim/scheduler.ts';
import type { NetSocket, Network, SocketHandlers } from '../../src/util/network.ts';
import { SeededRandom } from '../../src/util/random.ts';

const PORT = 9092;

/** What one end of a connection saw, with the simulated time of each event. */
interface Seen {
  socket: NetSocket | null;
  data: { atMs: number; text: string }[];
  closedAtMs: number | null;
  opened: number;
}

function recorder(scheduler: SimScheduler, seen: Seen, onData?: (socket: NetSocket, text: string) => void): SocketHandlers {
  return {
    open(socket) {
      seen.opened++;
      seen.socket = socket;
    },
    data(socket, chunk) {
      const text = new TextDecoder().decode(chunk);
      seen.data.push({ atMs: scheduler.nowMs - SIM_EPOCH_MS, text });
      onData?.(socket, text);
    },
    close() {
      seen.closedAtMs = scheduler.nowMs - SIM_EPOCH_MS;
    },
  };
}

function seen(): Seen {
  return { socket: null, data: [], closedAtMs: null, opened: 0 };
}

const bytes = (text: string) => new TextEncoder().encode(text);
const texts = (s: Seen) => s.data.map((d) => d.text).join('');

/** Two hosts, a server on b listening, a client on a connected to it. */
async function pair(seed = 1) {
  const scheduler = new SimScheduler(new SeededRandom(seed));
  const network = new SimNetwork(scheduler);
  const gates = { a: new ProcessGate('a'), b: new ProcessGate('b') };
  const hosts: Record<'a' | 'b', Network> = { a: network.host('a', gates.a), b: network.host('b', gates.b) };
  const server = seen();
  const client = seen();
  hosts.b.listen('b', PORT, recorder(scheduler, server));
  let socket: NetSocket | null = null;
  void hosts.a.connect('b', PORT, recorder(scheduler, client)).then((s) => (socket = s));
  await scheduler.run(SIM_EPOCH_MS + 10);
  expect(socket).not.toBeNull();
  return { scheduler, network, gates, hosts, server, client, socket: socket! as NetSocket };
}

describe('SimNetwork', () => {
  test('a connect reaches the listener; both ends open, the client after the server', async () => {
    const { server, client, socket } = await pair();
    expect(server.opened).toBe(1);
    expect(client.opened).toBe(1);
    expect(server.socket!.remoteAddress).toBe('a');
    expect(socket.remoteAddress).toBe('b');
  });

  test('bytes arrive in order, each after a latency, and none before it was written', async () => {
    const { scheduler, server, socket } = await pair();
    const sentAtMs: number[] = [];
    for (let i = 0; i < 200; i++) {
      sentAtMs.push(scheduler.nowMs - SIM_EPOCH_MS);
      expect(socket.write(bytes(`${i},`))).toBe(`${i},`.length);
      await scheduler.run(scheduler.nowMs + 0.01);
    }
    await scheduler.run(SIM_EPOCH_MS + 1_000);
    expect(texts(server)).toBe(Array.from({ length: 200 }, (_, i) => `${i},`).join(''));
    const arrivals = server.data.map((d) => d.atMs);
    for (let i = 1; i < arrivals.length; i++) expect(arrivals[i]!).toBeGreaterThanOrEqual(arrivals[i - 1]!);
    // every chunk took at least the minimum latency
    const firstArrival = arrivals[0]!;
    expect(firstArrival - sentAtMs[0]!).toBeGreaterThanOrEqual(0.05);
  });

  test('the writer may reuse its buffer: the bytes sent are those at write time', async () => {
    const { scheduler, server, socket } = await pair();
    const buffer = bytes('abc');
    socket.write(buffer);
    buffer.set(bytes('xyz'));
    await scheduler.run(SIM_EPOCH_MS + 100);
    expect(texts(server)).toBe('abc');
  });

  test('a Buffer too (whose slice is a view): the bytes sent are those at write time', async () => {
    const { scheduler, server, socket } = await pair();
    const slab = Buffer.from('..abc..');
    socket.write(slab.subarray(2, 5)); // a Fetch writes views of a reused read slab, a Buffer
    slab.write('xyz', 2);
    await scheduler.run(SIM_EPOCH_MS + 100);
    expect(texts(server)).toBe('abc');
  });

  test('pause holds arrived bytes until resume, in order', async () => {
    const { scheduler, server, socket } = await pair();
    server.socket!.pause();
    socket.write(bytes('one.'));
    socket.write(bytes('two.'));
    await scheduler.run(SIM_EPOCH_MS + 100);
    expect(server.data).toEqual([]);
    server.socket!.resume();
    socket.write(bytes('three.'));
    await scheduler.run(SIM_EPOCH_MS + 200);
    expect(texts(server)).toBe('one.two.three.');
  });

  test('end closes both ends after what was written arrived; writes after it are refused', async () => {
    const { scheduler, server, client, socket } = await pair();
    socket.write(bytes('last words'));
    socket.end();
    expect(socket.write(bytes('more'))).toBe(0);
    await scheduler.run(SIM_EPOCH_MS + 100);
    expect(texts(server)).toBe('last words');
    expect(server.closedAtMs).not.toBeNull();
    expect(client.closedAtMs).not.toBeNull();
    expect(server.closedAtMs!).toBeGreaterThanOrEqual(server.data.at(-1)!.atMs);
  });

  test('terminate drops what is in flight and closes both ends', async () => {
    const { scheduler, server, client, socket } = await pair();
    socket.write(bytes('never arrives'));
    socket.terminate();
    await scheduler.run(SIM_EPOCH_MS + 100);
    expect(server.data).toEqual([]);
    expect(server.closedAtMs).not.toBeNull();
    expect(client.closedAtMs).not.toBeNull();
  });

  test('a connect with nothing listening is refused', async () => {
    const { scheduler, hosts } = await pair();
    let error: Error | null = null;
    void hosts.a.connect('b', PORT + 1, recorder(scheduler, seen())).catch((e: Error) => (error = e));
    void hosts.a.connect('nowhere', PORT, recorder(scheduler, seen())).catch(() => {});
    await scheduler.run(SIM_EPOCH_MS + 100);
    expect(error!.message).toContain('refused');
  });

  test('a partition resets connections between the hosts; connects time out until healed', async () => {
    const { scheduler, network, hosts, server, client, socket } = await pair();
    socket.write(bytes('lost'));
    network.partition('a', 'b');
    expect(socket.write(bytes('more'))).toBe(0);
    await scheduler.run(SIM_EPOCH_MS + 100);
    expect(server.data).toEqual([]);
    expect(server.closedAtMs).not.toBeNull();
    expect(client.closedAtMs).not.toBeNull();

    const startedMs = scheduler.nowMs;
    let failedAtMs: number | null = null;
    void hosts.a.connect('b', PORT, recorder(scheduler, seen())).catch(() => (failedAtMs = scheduler.nowMs));
    await scheduler.run(startedMs + CONNECT_TIMEOUT_MS + 100);
    expect(failedAtMs! - startedMs).toBeGreaterThanOrEqual(CONNECT_TIMEOUT_MS);

    network.heal('a', 'b');
    let connected = false;
    void hosts.a.connect('b', PORT, recorder(scheduler, seen())).then(() => (connected = true));
    await scheduler.run(scheduler.nowMs + 100);
    expect(connected).toBe(true);
  });

  test('isolating a host cuts it from every other', async () => {
    const { scheduler, network, server, client } = await pair();
    network.isolate('b');
    await scheduler.run(SIM_EPOCH_MS + 100);
    expect(server.closedAtMs).not.toBeNull();
    expect(client.closedAtMs).not.toBeNull();
    expect(network.reachable('a', 'b')).toBe(false);
    network.rejoin('b');
    expect(network.reachable('a', 'b')).toBe(true);
  });

  test("kill resets the dead host's connections for their peers and its listeners vanish", async () => {
    const { scheduler, network, gates, hosts, server, client, socket } = await pair();
    gates.b.kill();
    network.kill('b');
    socket.write(bytes('to the dead'));
    await scheduler.run(SIM_EPOCH_MS + 100);
    expect(client.closedAtMs).not.toBeNull();
    expect(server.closedAtMs).toBeNull(); // the dead process runs nothing
    let error: Error | null = null;
    void hosts.a.connect('b', PORT, recorder(scheduler, seen())).catch((e: Error) => (error = e));
    await scheduler.run(SIM_EPOCH_MS + 200);
    expect(error!.message).toContain('refused');

    // a new process on the host listens again
    const restarted = network.host('b', new ProcessGate('b2'));
    restarted.listen('b', PORT, recorder(scheduler, seen()));
    let connected = false;
    void hosts.a.connect('b', PORT, recorder(scheduler, seen())).then(() => (connected = true));
    await scheduler.run(SIM_EPOCH_MS + 300);
    expect(connected).toBe(true);
  });

  test('a paused process receives nothing until it resumes, then all of it in order', async () => {
    const { scheduler, gates, server, socket } = await pair();
    gates.b.pause();
    socket.write(bytes('x'));
    socket.write(bytes('y'));
    await scheduler.run(SIM_EPOCH_MS + 100);
    expect(server.data).toEqual([]);
    gates.b.resume();
    expect(texts(server)).toBe('xy');
  });

  test('a host name resolves to itself, the address its peers see; an unknown one to nothing', async () => {
    const { scheduler, hosts, server } = await pair();
    let known: string[] | null = null;
    let unknown: string[] | null = null;
    void hosts.b.resolve('a').then((addresses) => (known = addresses));
    void hosts.b.resolve('nowhere').then((addresses) => (unknown = addresses));
    await scheduler.run(scheduler.nowMs + 100);
    expect(known!).toEqual([server.socket!.remoteAddress]);
    expect(unknown!).toEqual([]);
  });

  test('the same seed gives the same delivery times; another seed other ones', async () => {
    async function run(seed: number): Promise<number[]> {
      const { scheduler, server, socket } = await pair(seed);
      for (let i = 0; i < 50; i++) socket.write(bytes(`${i};`));
      await scheduler.run(SIM_EPOCH_MS + 1_000);
      expect(server.data.length).toBe(50);
      return server.data.map((d) => d.atMs);
    }
    expect(await run(7)).toEqual(await run(7));
    expect(await run(7)).not.toEqual(await run(8));
  });
});
