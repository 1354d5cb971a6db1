import { componentLogger, type Logger, type LoggerOption } from '../observability/logger.ts';
import { type Clock, systemClock } from '../util/clock.ts';
import { clientAddressOf, type Listener, type NetSocket, type Network } from '../util/network.ts';

/**
 * The greeting a broker's peer listener writes on every connection it accepts, followed by the
 * process's incarnation and a newline. Nothing else ever travels on a peer connection: it exists
 * only so that its end tells the other side something ([K1]).
 */
const PEER_GREETING = 'ferry-peer 1 ';
/** A greeting longer than this is not one (an incarnation is a UUID): the connection is dropped. */
const PEER_GREETING_BYTES_MAX = 128;
/**
 * Connections the peer listener holds at once from one address: a peer holds one (and briefly a
 * second while it reconnects), and brokers sharing a host share its address. Anyone who can reach
 * the port can connect (nothing is authenticated here, and nothing but the greeting travels), so
 * this bounds what one host can make the broker hold in descriptors.
 */
export const PEER_CONNECTIONS_PER_ADDRESS_MAX = 8;
/**
 * Connections the peer listener holds at once in all: a cluster's brokers, with room to spare.
 * Past it new connections are closed on arrival; a peer whose link cannot be made is judged by its
 * lease alone, as without peer links.
 */
export const PEER_CONNECTIONS_MAX = 256;
/**
 * After a greeted connection ends, a connection that opens and then closes without a greeting is
 * tried again this many times, PEER_RECHECK_DELAY_MS later and then at twice the wait each time.
 * A process killed with kill -9 resets its connections while its kernel tears it down, and the
 * connect that answers the reset can be accepted by its listener before that closes too, then
 * reset: measured on Linux loopback, 4 kills in 8 went so (a probe of PeerLinks with a killed child
 * process), and the exit then waited for the next scan's connect (up to a second; issue 28's
 * failover bench: 0.4-1.1 s from kill to takeover). A live peer greets; a listener full of others'
 * connections closes without one, so the retries stop after these few and the next scan tries again.
 */
export const PEER_RECHECKS_MAX = 5;
export const PEER_RECHECK_DELAY_MS = 10;

/** A peer as its broker record names it: where its peer listener is, and which process it is. */
export interface PeerAddress {
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
  readonly incarnation: string;
}

export interface PeerLinksOptions {
  readonly network: Network;
  /** Where this broker's own peer listener listens (port 0: any free port, published in its broker record). */
  readonly listenHost: string;
  readonly listenPort: number;
  readonly log?: LoggerOption;
  /** Times the rechecks after a greeted connection ended (PEER_RECHECKS_MAX); the system's clock by default. */
  readonly clock?: Clock;
}

/** One peer process this broker watches: its address and what its connection showed so far. */
interface Watch {
  readonly peer: PeerAddress;
  socket: NetSocket | null;
  /** A connect is on its way (none other starts meanwhile). */
  connecting: boolean;
  /** Its listener greeted this broker once as `peer.incarnation`: a later refusal means that process is gone. */
  greeted: boolean;
  /** Its exit was reported (once). */
  exited: boolean;
  /** PEER_RECHECKS_MAX: tries left for a connection closed without a greeting since a greeted one ended. */
  rechecksLeft: number;
}

/**
 * docs/tier-protocol.md [K1], docs/cluster-protocol.md [C1] "peer links": each broker listens for
 * its peers and greets every connection with its process incarnation, and holds one connection to
 * each live peer its scans see. When a connection its peer greeted closes, it connects again at
 * once: a refusal (nothing listens there any more: the process exited, kill -9 included, as its
 * kernel closed the listener with it) or a greeting from another incarnation means the process
 * it watched is gone, and `exited` says so. A connect that times out or fails otherwise (a
 * network partition, a paused peer that never greets) says nothing: the lease judges that peer.
 * No store request is made here; the caller checks the verdict against the peer's broker record.
 */
export class PeerLinks {
  readonly #options: PeerLinksOptions;
  readonly #log: Logger;
  readonly #watches = new Map<number, Watch>();
  #listener: Listener | null = null;
  #incarnation = '';
  #exited: (nodeId: number, incarnation: string) => void = () => {};
  #closed = false;

  constructor(options: PeerLinksOptions) {
    this.#options = options;
    this.#log = componentLogger(options.log, 'cluster');
  }

  /**
   * Starts accepting peers, greeting each connection as `incarnation`; `exited` hears of every
   * watched peer process found gone. Returns the port to publish in the broker record.
   */
  open(incarnation: string, exited: (nodeId: number, incarnation: string) => void): number {
    this.#incarnation = incarnation;
    this.#exited = exited;
    const greeting = new TextEncoder().encode(`${PEER_GREETING}${incarnation}\n`);
    // The connections accepted and still open, in all and by client address.
    const accepted = new Set<NetSocket>();
    const held = new Map<string, number>();
    let heldCount = 0;
    this.#listener = this.#options.network.listen(this.#options.listenHost, this.#options.listenPort, {
      open: (socket) => {
        const address = clientAddressOf(socket.remoteAddress);
        const fromAddress = held.get(address) ?? 0;
        if (heldCount >= PEER_CONNECTIONS_MAX || fromAddress >= PEER_CONNECTIONS_PER_ADDRESS_MAX) return socket.terminate();
        held.set(address, fromAddress + 1);
        heldCount++;
        accepted.add(socket);
        socket.write(greeting);
      },
      data: () => {}, // peers send nothing; anything sent is ignored
      close: (socket) => {
        if (!accepted.delete(socket)) return;
        const address = clientAddressOf(socket.remoteAddress);
        const fromAddress = held.get(address)! - 1;
        if (fromAddress === 0) held.delete(address);
        else held.set(address, fromAddress);
        heldCount--;
      },
    });
    return this.#listener.port;
  }

  /**
   * After each scan: the peers as their broker records name them now. A peer not watched yet, or
   * under another incarnation or address than watched, is connected to; one no longer named is let go.
   */
  watch(peers: readonly PeerAddress[]): void {
    if (this.#closed || this.#listener === null) return;
    const named = new Set<number>();
    for (const peer of peers) {
      named.add(peer.nodeId);
      const watched = this.#watches.get(peer.nodeId);
      if (watched !== undefined && samePeer(watched.peer, peer)) {
        if (watched.socket === null && !watched.connecting && !watched.exited) this.#connect(watched); // silent so far: try again
        continue;
      }
      if (watched !== undefined) this.#drop(watched);
      const watch: Watch = { peer, socket: null, connecting: false, greeted: false, exited: false, rechecksLeft: 0 };
      this.#watches.set(peer.nodeId, watch);
      this.#connect(watch);
    }
    for (const watch of [...this.#watches.values()]) if (!named.has(watch.peer.nodeId)) this.#drop(watch);
  }

  /** Whether this broker holds a greeted connection to `nodeId` now (tests, logs). */
  connected(nodeId: number): boolean {
    const watch = this.#watches.get(nodeId);
    return watch !== undefined && watch.socket !== null && watch.greeted;
  }

  /** Stops listening and drops every connection: peers find this process gone. */
  close(): void {
    this.#closed = true;
    this.#listener?.stop(true);
    for (const watch of [...this.#watches.values()]) this.#drop(watch);
  }

  #drop(watch: Watch): void {
    if (this.#watches.get(watch.peer.nodeId) === watch) this.#watches.delete(watch.peer.nodeId);
    const socket = watch.socket;
    watch.socket = null;
    socket?.terminate();
  }

  #current(watch: Watch): boolean {
    return !this.#closed && this.#watches.get(watch.peer.nodeId) === watch;
  }

  #connect(watch: Watch): void {
    watch.connecting = true;
    let received = '';
    /** Whether this connection was greeted: only the end of one that was tells anything at once. */
    const greetedHere = { value: false };
    this.#options.network
      .connect(watch.peer.host, watch.peer.port, {
        open: (socket) => {
          watch.connecting = false;
          if (!this.#current(watch) || watch.exited) socket.terminate();
          else watch.socket = socket;
        },
        data: (socket, chunk) => {
          if (received.includes('\n')) return;
          received += new TextDecoder().decode(chunk);
          if (!received.includes('\n') && received.length <= PEER_GREETING_BYTES_MAX) return;
          greetedHere.value = this.#greeted(watch, socket, received);
        },
        close: (socket) => this.#closedBy(watch, socket, greetedHere.value),
      })
      .catch((error: unknown) => {
        watch.connecting = false;
        if (!this.#current(watch) || watch.exited) return;
        // Refused: nothing listens there now. Only a process that greeted here once is known to have
        // listened there, so only then is this its exit (a wrong address in a record is not a death).
        if (watch.greeted && refused(error)) this.#exit(watch, 'its peer listener refuses connections');
      });
  }

  /** Reads a greeting; true when it is the watched process's. */
  #greeted(watch: Watch, socket: NetSocket, received: string): boolean {
    if (!this.#current(watch) || watch.socket !== socket) return false;
    const line = received.slice(0, received.indexOf('\n'));
    const incarnation = line.startsWith(PEER_GREETING) ? line.slice(PEER_GREETING.length) : null;
    if (incarnation === watch.peer.incarnation) {
      watch.greeted = true;
      watch.rechecksLeft = 0;
      return true;
    }
    // Another process listens where the record said: the watched one is gone if it ever greeted here.
    if (watch.greeted && incarnation !== null) this.#exit(watch, `incarnation ${incarnation} listens in its place`);
    else this.#log.warn({ peer: watch.peer.nodeId }, `peer link to broker ${watch.peer.nodeId}: unexpected greeting, left to the lease`);
    watch.socket = null;
    socket.terminate();
    return false;
  }

  /**
   * A connection ended: if it was greeted, look again at once (a refusal is the exit, [K1]). One
   * closed before its greeting is tried again after a short wait while rechecks are left since a
   * greeted one ended (a dying listener's accept, PEER_RECHECKS_MAX), and otherwise at the next
   * scan, not at once: that would spin against a listener full of others' connections.
   */
  #closedBy(watch: Watch, socket: NetSocket, greetedHere: boolean): void {
    if (watch.socket !== socket) return;
    watch.socket = null;
    if (!this.#current(watch) || watch.exited) return;
    if (greetedHere) {
      watch.rechecksLeft = PEER_RECHECKS_MAX;
      return this.#connect(watch);
    }
    if (watch.rechecksLeft === 0) return;
    const waitMs = PEER_RECHECK_DELAY_MS * 2 ** (PEER_RECHECKS_MAX - watch.rechecksLeft);
    watch.rechecksLeft--;
    (this.#options.clock ?? systemClock).setTimer(
      waitMs,
      () => {
        if (this.#current(watch) && !watch.exited && watch.socket === null && !watch.connecting) this.#connect(watch);
      },
      true,
    );
  }

  #exit(watch: Watch, why: string): void {
    if (watch.exited) return;
    watch.exited = true;
    this.#log.warn({ peer: watch.peer.nodeId, incarnation: watch.peer.incarnation, why }, `broker ${watch.peer.nodeId} (incarnation ${watch.peer.incarnation}) is gone: ${why}`);
    this.#exited(watch.peer.nodeId, watch.peer.incarnation);
  }
}

function samePeer(a: PeerAddress, b: PeerAddress): boolean {
  return a.nodeId === b.nodeId && a.host === b.host && a.port === b.port && a.incarnation === b.incarnation;
}

/** A connect answered by the peer's kernel with a reset: nothing listens on that port. */
function refused(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ECONNREFUSED' || (error instanceof Error && /ECONNREFUSED|connection refused/i.test(error.message));
}
