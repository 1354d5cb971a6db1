import { assert } from '../util/assert.ts';
import { copyBytes } from '../util/bytes.ts';
import type { Listener, NetSocket, Network, SocketHandlers } from '../util/network.ts';
import type { ProcessGate, SimScheduler } from './scheduler.ts';

/** Which process wrote a chunk a listener's connection carried, and when (simulated ms). */
export interface ChunkOrigin {
  readonly process: string;
  readonly atMs: number;
}

/**
 * One-way latency of a packet: uniform in [LATENCY_MIN_MS, LATENCY_MIN_MS + LATENCY_SPREAD_MS)
 * (a LAN), and with probability LATENCY_SPIKE_CHANCE up to LATENCY_SPIKE_MAX_MS more (a queue
 * somewhere, a retransmission): the rare slow packet is where races between brokers hide.
 */
export const LATENCY_MIN_MS = 0.05;
export const LATENCY_SPREAD_MS = 0.45;
export const LATENCY_SPIKE_CHANCE = 0.01;
export const LATENCY_SPIKE_MAX_MS = 20;
/**
 * How long a connect across a partition waits before it fails (its SYNs are lost). Real TCP gives
 * up after a minute or more; a second keeps a simulated run moving while still being far longer
 * than any round trip, so code that waits on a connect is seen waiting.
 */
export const CONNECT_TIMEOUT_MS = 1_000;
/** Ports handed out for port 0 start here (the Linux ephemeral range). */
const EPHEMERAL_PORT_FIRST = 32_768;

/** What travels one direction of a link, in order: the handshake's answer, bytes, the FIN, a reset. */
type Packet = { readonly kind: 'open' } | { readonly kind: 'data'; readonly bytes: Uint8Array } | { readonly kind: 'fin' } | { readonly kind: 'reset' };

interface InFlight {
  readonly atMs: number;
  readonly packet: Packet;
}

/** A process's place on the network: its gate, listeners and sockets. A restarted process gets a new one. */
interface SimHost {
  readonly address: string;
  readonly gate: ProcessGate;
  readonly listeners: Map<number, SocketHandlers>;
  readonly endpoints: Set<SimEndpoint>;
  nextPort: number;
  dead: boolean;
}

/**
 * A simulated network of named hosts (docs/design.md contract 8), driven by a SimScheduler.
 *
 * - Bytes arrive in order per direction, each write after a seeded latency (never before an
 *   earlier write of the same direction). `write` takes everything (an unbounded send buffer, so
 *   `drain` never fires); `pause` holds arrived bytes until `resume`.
 * - `end` closes the connection once the bytes written before it have arrived: both ends see
 *   `close` then, and bytes still travelling the other way are dropped (no half-open sockets).
 * - `terminate` resets: the caller sees `close` at once (on a later event), the peer when the
 *   reset arrives; bytes in flight either way are dropped.
 * - `partition(a, b)` (or `isolate(host)`): connections between them are reset, both ends see
 *   `close` (as keepalives or a write timeout would tell them, made immediate); new connects
 *   fail after CONNECT_TIMEOUT_MS. `heal` / `rejoin` let new connects through again.
 * - `kill(host)`: its listeners vanish (connect is refused) and its connections are reset for
 *   their peers (its kernel answers with RST). Call it when the host's process dies; the caller
 *   kills the process's gate, and a new process on the host calls `host(address, gate)` again.
 *   Peers see their connections end and a reconnect refused: the brokers' peer links take exactly
 *   that as the process's exit ([K1], src/cluster/peer-links.ts).
 * - A paused process (its gate holds what arrives) keeps its connections open and silent: its
 *   kernel still completes handshakes, but nothing it would answer arrives until it resumes.
 *
 * Everything a process receives (open, data, close, connect resolution) runs through its gate.
 * A connection whose handshake answer is on its way when it is reset still opens, then closes:
 * a connect never hangs.
 */
export class SimNetwork {
  readonly #scheduler: SimScheduler;
  /** Each chunk a listening side wrote, as its peer receives it: who wrote it and when (the history's answer origins). */
  readonly #origins = new WeakMap<Uint8Array, ChunkOrigin>();
  readonly #hosts = new Map<string, SimHost>();
  readonly #partitions = new Set<string>();
  readonly #isolated = new Set<string>();

  constructor(scheduler: SimScheduler) {
    this.#scheduler = scheduler;
  }

  /** The network as the process behind `gate` on host `address` uses it. */
  host(address: string, gate: ProcessGate): Network {
    const previous = this.#hosts.get(address);
    assert(previous === undefined || previous.dead, `host ${address} already runs a process (kill it first)`);
    const host: SimHost = { address, gate, listeners: new Map(), endpoints: new Set(), nextPort: EPHEMERAL_PORT_FIRST, dead: false };
    this.#hosts.set(address, host);
    return {
      listen: (hostname, port, handlers) => this.#listen(host, hostname, port, handlers),
      connect: (hostname, port, handlers) => this.#connect(host, hostname, port, handlers),
      resolve: (hostname) => this.#resolve(host, hostname),
    };
  }

  /** Cuts the two hosts apart: their connections are reset, new connects time out. */
  partition(a: string, b: string): void {
    this.#partitions.add(pairKey(a, b));
    this.#severWhere((x, y) => pairKey(x, y) === pairKey(a, b));
  }

  heal(a: string, b: string): void {
    this.#partitions.delete(pairKey(a, b));
  }

  /** Cuts one host from every other. */
  isolate(address: string): void {
    this.#isolated.add(address);
    this.#severWhere((x, y) => x === address || y === address);
  }

  rejoin(address: string): void {
    this.#isolated.delete(address);
  }

  /** The process on `address` died: its listeners vanish, its connections are reset for their peers. */
  kill(address: string): void {
    const host = this.#hosts.get(address);
    if (host === undefined || host.dead) return;
    host.dead = true;
    host.listeners.clear();
    for (const endpoint of [...host.endpoints]) endpoint.link.reset(endpoint.side);
  }

  reachable(a: string, b: string): boolean {
    return !this.#partitions.has(pairKey(a, b)) && !this.#isolated.has(a) && !this.#isolated.has(b);
  }

  /** One packet's one-way delay, seeded. */
  latencyMs(): number {
    const random = this.#scheduler.random;
    const base = LATENCY_MIN_MS + random.next() * LATENCY_SPREAD_MS;
    return random.next() < LATENCY_SPIKE_CHANCE ? base + random.next() * LATENCY_SPIKE_MAX_MS : base;
  }

  get scheduler(): SimScheduler {
    return this.#scheduler;
  }

  /** Who wrote `chunk`, a chunk a connecting side received (handed to its `data` handler), and when; null for any other. */
  origin(chunk: Uint8Array): ChunkOrigin | null {
    return this.#origins.get(chunk) ?? null;
  }

  /** `chunk` is on its way from the listening side's process, written now. */
  noteOrigin(chunk: Uint8Array, process: string): void {
    this.#origins.set(chunk, { process, atMs: this.#scheduler.nowMs });
  }

  #severWhere(between: (a: string, b: string) => boolean): void {
    for (const host of this.#hosts.values()) {
      for (const endpoint of [...host.endpoints]) if (between(host.address, endpoint.remoteAddress)) endpoint.link.sever();
    }
  }

  #listen(host: SimHost, hostname: string, port: number, handlers: SocketHandlers): Listener {
    assert(hostname === host.address || hostname === '0.0.0.0', `a process on ${host.address} listens on its own address, not ${hostname}`);
    assert(!host.dead, `the process on ${host.address} is dead`);
    let bound = port;
    if (bound === 0) while (host.listeners.has((bound = host.nextPort++)));
    if (host.listeners.has(bound)) throw new Error(`listen EADDRINUSE ${host.address}:${bound}`);
    host.listeners.set(bound, handlers);
    return {
      port: bound,
      stop: (closeActive = false) => {
        if (host.listeners.get(bound) === handlers) host.listeners.delete(bound);
        if (closeActive) for (const endpoint of [...host.endpoints]) if (endpoint.handlers === handlers) endpoint.end();
      },
    };
  }

  /** A host is known by its name, which is also the `remoteAddress` its peers see; the answer takes a round trip. */
  #resolve(from: SimHost, hostname: string): Promise<string[]> {
    return new Promise<string[]>((resolve) => {
      this.#scheduler.complete(2 * this.latencyMs(), () => from.gate.deliver(() => resolve(this.#hosts.has(hostname) ? [hostname] : [])));
    });
  }

  /** SYN to the listener after a latency; its answer (open, refusal) after another; lost across a partition. */
  #connect(from: SimHost, address: string, port: number, handlers: SocketHandlers): Promise<NetSocket> {
    return new Promise<NetSocket>((resolve, reject) => {
      const fail = (error: Error): void => from.gate.deliver(() => reject(error));
      this.#scheduler.complete(this.latencyMs(), () => {
        if (from.dead) return; // the SYN of a process that died since: nobody waits for the answer
        const to = this.#hosts.get(address);
        if (!this.reachable(from.address, address)) {
          this.#scheduler.complete(CONNECT_TIMEOUT_MS, () => fail(new Error(`connect ETIMEDOUT ${address}:${port} (partitioned from ${from.address})`)));
          return;
        }
        const accept = to === undefined || to.dead ? undefined : to.listeners.get(port);
        if (to === undefined || accept === undefined) {
          this.#scheduler.complete(this.latencyMs(), () => fail(new Error(`connect ECONNREFUSED ${address}:${port}: connection refused`)));
          return;
        }
        const link = new SimLink(this, from, handlers, to, accept, resolve);
        to.gate.deliver(() => accept.open?.(link.endpoints[1]));
      });
    });
  }
}

/**
 * One established connection: the client's endpoint (side 0) and the server's (side 1), and what
 * travels each way. Packets of one direction arrive in the order sent: each is due no earlier than
 * the one before, and every arrival event delivers all that are due, in order.
 */
class SimLink {
  readonly endpoints: readonly [SimEndpoint, SimEndpoint];
  /** inFlight[side]: travelling towards endpoints[side]. */
  readonly #inFlight: [InFlight[], InFlight[]] = [[], []];
  readonly #network: SimNetwork;
  readonly #opened: (socket: NetSocket) => void;
  #closed = false;
  /** A side that called end(): it writes no more. */
  readonly #ended: [boolean, boolean] = [false, false];

  constructor(network: SimNetwork, client: SimHost, clientHandlers: SocketHandlers, server: SimHost, serverHandlers: SocketHandlers, opened: (socket: NetSocket) => void) {
    this.#network = network;
    this.#opened = opened;
    this.endpoints = [new SimEndpoint(this, 0, client, clientHandlers, server.address), new SimEndpoint(this, 1, server, serverHandlers, client.address)];
    client.endpoints.add(this.endpoints[0]);
    server.endpoints.add(this.endpoints[1]);
    this.#send(0, { kind: 'open' }); // the SYN-ACK: whatever the server writes comes after it
  }

  get closed(): boolean {
    return this.#closed;
  }

  write(side: 0 | 1, bytes: Uint8Array): number {
    if (this.#closed || this.#ended[side]) return 0;
    // The caller may reuse its buffer once write returns (a Fetch's read slab does): a real copy,
    // since Buffer#slice (a read slab is a Buffer) would be a view.
    const copy = copyBytes(bytes);
    if (side === 1) this.#network.noteOrigin(copy, this.endpoints[1].host.gate.name);
    this.#send(other(side), { kind: 'data', bytes: copy });
    return bytes.length;
  }

  end(side: 0 | 1): void {
    if (this.#closed || this.#ended[side]) return;
    this.#ended[side] = true;
    this.#send(other(side), { kind: 'fin' });
  }

  /** A reset from `side`: it sees close at once, the peer when the RST arrives; nothing else in flight arrives. */
  reset(side: 0 | 1): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#dropInFlight();
    this.#network.scheduler.complete(0, () => this.endpoints[side].closed());
    this.#send(other(side), { kind: 'reset' });
  }

  /** Cut by a partition: each end sees close; the handshake's answer, if on its way, still arrives first. */
  sever(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.#dropInFlight();
    this.#send(0, { kind: 'reset' });
    this.#send(1, { kind: 'reset' });
  }

  /** Drops bytes and FINs in flight; the handshake's answer stays (a connect always settles). */
  #dropInFlight(): void {
    for (const queue of this.#inFlight) {
      const kept = queue.filter((item) => item.packet.kind === 'open');
      queue.splice(0, queue.length, ...kept);
    }
  }

  #send(towards: 0 | 1, packet: Packet): void {
    const queue = this.#inFlight[towards];
    const nowMs = this.#network.scheduler.nowMs;
    const atMs = Math.max(nowMs + this.#network.latencyMs(), queue.at(-1)?.atMs ?? nowMs);
    queue.push({ atMs, packet });
    this.#network.scheduler.complete(atMs - nowMs, () => this.#arrive(towards));
  }

  #arrive(towards: 0 | 1): void {
    const queue = this.#inFlight[towards];
    const nowMs = this.#network.scheduler.nowMs;
    while (queue.length > 0 && queue[0]!.atMs <= nowMs) this.#deliver(towards, queue.shift()!.packet);
  }

  #deliver(towards: 0 | 1, packet: Packet): void {
    const endpoint = this.endpoints[towards];
    switch (packet.kind) {
      case 'open':
        assert(towards === 0, 'only the client waits for the handshake');
        endpoint.host.gate.deliver(() => {
          endpoint.handlers.open?.(endpoint);
          this.#opened(endpoint);
        });
        return;
      case 'data':
        if (!this.#closed) endpoint.arrived(packet.bytes);
        return;
      case 'fin':
        // Everything written before the FIN has arrived: the connection is done for both ends.
        this.#closed = true;
        this.#dropInFlight();
        endpoint.closed();
        this.endpoints[other(towards)].closed();
        return;
      case 'reset':
        endpoint.closed();
        return;
    }
  }
}

/** One end of a SimLink, as its process sees it. */
class SimEndpoint implements NetSocket {
  readonly link: SimLink;
  readonly side: 0 | 1;
  readonly host: SimHost;
  readonly handlers: SocketHandlers;
  readonly remoteAddress: string;
  #paused = false;
  /** Arrived while paused, in order; handed on after resume. */
  readonly #held: Uint8Array[] = [];
  #closeDelivered = false;

  constructor(link: SimLink, side: 0 | 1, host: SimHost, handlers: SocketHandlers, remoteAddress: string) {
    this.link = link;
    this.side = side;
    this.host = host;
    this.handlers = handlers;
    this.remoteAddress = remoteAddress;
  }

  write(bytes: Uint8Array): number {
    return this.link.write(this.side, bytes);
  }

  end(): void {
    this.link.end(this.side);
  }

  terminate(): void {
    this.link.reset(this.side);
  }

  pause(): void {
    this.#paused = true;
  }

  resume(): void {
    if (!this.#paused) return;
    this.#paused = false;
    // on a later event, as a socket's reads resume: the caller finishes what it was doing first
    if (this.#held.length > 0) queueMicrotask(() => this.host.gate.deliver(() => this.#handOn()));
  }

  /** Bytes reached this end's kernel: handed to the process unless it paused reading. */
  arrived(bytes: Uint8Array): void {
    this.host.gate.deliver(() => {
      this.#held.push(bytes);
      this.#handOn();
    });
  }

  /** The connection ended for this end: its process sees close once. */
  closed(): void {
    this.host.gate.deliver(() => {
      if (this.#closeDelivered) return;
      this.#closeDelivered = true;
      this.#held.length = 0;
      this.handlers.close?.(this);
    });
    this.host.endpoints.delete(this);
  }

  #handOn(): void {
    while (!this.#paused && !this.#closeDelivered && this.#held.length > 0) this.handlers.data(this, this.#held.shift()!);
  }
}

function other(side: 0 | 1): 0 | 1 {
  return side === 0 ? 1 : 0;
}

function pairKey(a: string, b: string): string {
  return a < b ? `${a}\u0000${b}` : `${b}\u0000${a}`;
}
