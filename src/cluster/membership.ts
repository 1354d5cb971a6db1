import { FerryError } from '../errors.ts';
import type { Logger } from '../observability/logger.ts';
import type { Clock } from '../util/clock.ts';
import { type Random, systemRandom } from '../util/random.ts';
import { randomUuid } from '../util/uuid.ts';
import { regressed } from '../util/regressions.ts';
import type { StreamId } from '../wal/keys.ts';
import { type ControlStore, RecordCache, type Versioned } from '../control/control-store.ts';
import { Lease } from './lease.ts';
import { Liveness } from './liveness.ts';
import type { PeerAddress } from './peer-links.ts';
import type { BrokerRecord } from './control-records.ts';

/** This broker's local disk and WAL store as the cluster sees them: whether it may lead ([C1] storageFailing). */
export interface LocalStorage {
  /** Whether local log writes fail now. */
  failing(): boolean;
  /** While they fail: tries a write, and returns whether they still fail. */
  recheck(): boolean;
  /** How long requests to the WAL store (its writers' uploads, its followers' reads) have failed with no write landing, across writer epochs (0 while they land). */
  walStoreFailingForMs(): number;
}

/**
 * [C1] Requests to the WAL store that failed for this many of the broker's leases, with no write
 * landing (nor, for a follower's reads, any answered) since, count as a failed disk: the store is
 * cut off from this broker (a network partition, revoked access). A leader that keeps its lease
 * would hold every acks=all of its partitions for as long as the cut lasts, and a follower that
 * keeps it would stay in its leaders' in-sync sets for replica.lag.time.max.ms (30 s), holding
 * theirs. Others, who may reach the store, take its partitions over (their seal fences this
 * writer) and its place as follower instead. One lease: an outage shorter than what a dead broker
 * costs moves nothing.
 */
export const WAL_UNREACHABLE_LEASES = 1;

/** [K1] The peer connections as the node drives them (src/cluster/peer-links.ts). */
export interface PeerWatch {
  /** Starts accepting peers, greeting as `incarnation`; returns the port for the broker record. */
  open(incarnation: string, exited: (nodeId: number, incarnation: string) => void): number;
  /** After each scan: the other brokers' records as read. */
  watch(peers: readonly PeerAddress[]): void;
  close(): void;
}

export interface MembershipOptions {
  readonly control: ControlStore;
  /** [K1] Connections to the other brokers that tell when one's process exits; absent: leases alone. */
  readonly peers?: PeerWatch;
  /** Absent: the disk is taken to work (writes that fail then only fail their requests). */
  readonly storage?: LocalStorage;
  /** This broker's record; its stream is the writer's at start. */
  readonly self: Omit<BrokerRecord, 'renewedAtMs'>;
  readonly clock: Clock;
  /** Draws this process's incarnation (and the ids of topics this node creates); the operating system's by default (ids must never repeat). */
  readonly random?: Random;
}

/** [C1] The partitions this broker serves, as a step-down lets go of them. */
export interface ServedPartitions {
  /** Releases every partition served here, after the scan or writer-epoch change under way. */
  releaseAll(): Promise<void>;
}

/**
 * This broker's place among the brokers (docs/cluster-protocol.md [C1], [K1]): its broker record
 * and the lease it renews there, the step-down once another process is this node, whether its
 * storage fails, and the other brokers as its scans read them and its peer links see them exit.
 */
export class Membership {
  readonly #options: MembershipOptions;
  readonly #log: Logger;
  readonly #served: ServedPartitions;
  readonly #brokerRecords: RecordCache<BrokerRecord>;
  #brokers: BrokerRecord[] = [];
  #stopped = false;
  #stream: StreamId;
  readonly #lease: Lease;
  readonly #liveness: Liveness;
  /** Renewals whose put is on its way: a resignation is written after them. */
  readonly #renewals = new Set<Promise<void>>();
  #resigned = false;
  /** This process's mark in its broker record, and the record's ETag as this process last wrote it. */
  readonly #incarnation: string;
  #recordEtag: string | null = null;
  /** Another process took this node id over (its broker record): this one leads nothing again. */
  #superseded = false;
  /** Writes of this broker's record, one at a time (#writeRecord). */
  #recordWrites: Promise<void> = Promise.resolve();
  /** Whether the last record this broker wrote said storageFailing: a change is logged. */
  #saidStorageFailing = false;
  /** [K1] This process's peer listener port, published in its broker record. */
  #peerPort: number | undefined;

  constructor(options: MembershipOptions, served: ServedPartitions, log: Logger) {
    this.#options = options;
    this.#log = log;
    this.#served = served;
    this.#stream = options.self.stream;
    this.#lease = new Lease(options.self.leaseMs, options.clock);
    this.#incarnation = randomUuid(options.random ?? systemRandom);
    this.#liveness = new Liveness(options.clock);
    this.#brokerRecords = new RecordCache(options.control, 'brokers/');
  }

  get nodeId(): number {
    return this.#options.self.nodeId;
  }

  /** This process's mark, unique to it: what it claims records with (its broker record, the groups it coordinates). */
  get incarnation(): string {
    return this.#incarnation;
  }

  /** The stream this broker writes now (a new one after each writer epoch change, [C7]). */
  get stream(): StreamId {
    return this.#stream;
  }

  /** [C7] The writer's new epoch: its stream goes into this broker's record from the next renewal on. */
  useStream(stream: StreamId): void {
    this.#stream = stream;
  }

  /** This broker's own lease as it can be sure of it. */
  get lease(): Lease {
    return this.#lease;
  }

  /** Another process took this node id over: this one leads and claims nothing again. */
  get superseded(): boolean {
    return this.#superseded;
  }

  /** Whether the last record this broker wrote said storageFailing. */
  get saysStorageFailing(): boolean {
    return this.#saidStorageFailing;
  }

  /** Stops watching peers (the node stops). */
  stop(): void {
    this.#stopped = true;
  }

  /**
   * [C1] Whether this broker may acknowledge now: its lease is surely held in everyone's eyes,
   * and after a lapse, a scan confirmed which partitions are still its own.
   */
  leaseHeld(): boolean {
    if (regressed('lapsed-lease-keeps-serving')) return !this.#superseded && !this.#lease.awaitingConfirmation;
    return !this.#superseded && this.#lease.held();
  }

  /** [C1] Whether this broker may lead now: still this node, renewed in time, its storage working. */
  mayLead(): boolean {
    return !this.#superseded && this.#lease.renewedInTime() && !this.#storageFailing();
  }

  /** [C1] Brokers alive as this one observes them; itself unless its lease lapsed unrenewed. */
  liveBrokers(): BrokerRecord[] {
    return this.#brokers.filter((broker) => this.#isLive(broker));
  }

  /** Broker `nodeId`'s record if it is alive (liveBrokers' test of one broker: asked per partition, by scans and Metadata answers). */
  liveBroker(nodeId: number): BrokerRecord | undefined {
    const broker = this.#brokers.find((b) => b.nodeId === nodeId);
    return broker !== undefined && this.#isLive(broker) ? broker : undefined;
  }

  #isLive(broker: BrokerRecord): boolean {
    return broker.nodeId === this.nodeId ? !this.#superseded && this.#lease.renewedInTime() : this.#liveness.isAlive(broker);
  }

  /** The broker records as the last scan read them, alive or not. */
  get brokers(): readonly BrokerRecord[] {
    return this.#brokers;
  }

  /** A scan's read of every broker record (`sawBrokers` takes the result). */
  readBrokers(): Promise<ReadonlyMap<string, Versioned<BrokerRecord>>> {
    return this.#brokerRecords.refresh();
  }

  /** [C1], [K1] Notes a scan's broker records and watches their peers; returns the monotonic time they count as read. */
  sawBrokers(brokerRecords: readonly Versioned<BrokerRecord>[]): number {
    const observedMs = this.#liveness.observe(brokerRecords);
    this.#brokers = brokerRecords.map((record) => record.value);
    this.#watchPeers();
    return observedMs;
  }

  /** [C1] Whether broker `broker` (another) counted alive as of `observedMs`, when a scan read the records. */
  isAlive(broker: BrokerRecord, observedMs: number): boolean {
    return this.#liveness.isAlive(broker, observedMs);
  }

  /** [C1] While local writes or WAL store requests fail: tries a local write again (the storage may say it works). */
  recheckStorage(): void {
    const storage = this.#options.storage;
    if (storage !== undefined && (storage.failing() || storage.walStoreFailingForMs() > 0)) storage.recheck();
  }

  /** [K1] Starts the peer listener (once), before the record names its port: a peer that connects finds it. */
  openPeerLinks(exited: (nodeId: number, incarnation: string) => void): void {
    if (this.#options.peers !== undefined && this.#peerPort === undefined) this.#peerPort = this.#options.peers.open(this.#incarnation, exited);
  }

  /** [K1] Stops the peer listener and its connections (after a resignation, or when the broker gave up starting). */
  closePeerLinks(): void {
    this.#options.peers?.close();
  }

  /** [K1] Broker `nodeId`'s record as the store has it now: a peer's exit is judged by it (peerExited). */
  readBroker(nodeId: number): Promise<Versioned<BrokerRecord> | null> {
    return this.#options.control.read<BrokerRecord>(`brokers/${nodeId}`);
  }

  /**
   * [K1] A peer's process exited (its connection ended, its listener refuses). The store stays the
   * arbiter: only if the broker record (`record`, read since) still names that incarnation is the
   * record's version dead now (a resigned one is dead already). Returns whether it is: the scan
   * that follows claims what it led by compare-and-swap [C3], and the seal fences whatever the old
   * writer might still have on its way [C4].
   */
  peerExited(nodeId: number, incarnation: string, record: Versioned<BrokerRecord> | null): boolean {
    if (record === null || record.value.incarnation !== incarnation) return false; // another process is that node now: it reclaims its own
    this.#liveness.exited(nodeId, record.etag);
    this.#log.warn({ peer: nodeId }, `broker ${nodeId} exited (its peer link ended): taking over now rather than after its lease`);
    return true;
  }

  /** [K1] The other brokers whose records name a peer listener and a live incarnation. */
  #watchPeers(): void {
    const peers = this.#options.peers;
    if (peers === undefined || this.#stopped) return;
    const named: PeerAddress[] = [];
    for (const b of this.#brokers) {
      if (b.nodeId === this.nodeId || b.peerPort === undefined || b.incarnation === undefined || b.renewedAtMs === 0) continue;
      named.push({ nodeId: b.nodeId, host: b.host, port: b.peerPort, incarnation: b.incarnation });
    }
    peers.watch(named);
  }

  /**
   * Clears the lease at once (a clean shutdown), so others take over without waiting it out. No
   * renewal starts after it, and it is written after every renewal already on its way (a plain put
   * that landed later would bring the lease back for a whole lease time).
   */
  async resign(): Promise<void> {
    this.#resigned = true;
    await Promise.allSettled([...this.#renewals]);
    try {
      if (!this.#superseded) await this.#writeRecord(0); // never the resignation of the process that took this node id over
    } finally {
      this.closePeerLinks(); // after the resignation: peers that see the links end find it resigned already
    }
  }

  #storageFailing(): boolean {
    const storage = this.#options.storage;
    if (storage === undefined) return false;
    return storage.failing() || storage.walStoreFailingForMs() >= WAL_UNREACHABLE_LEASES * this.#options.self.leaseMs;
  }

  /** [C1] Rewrites this broker's record; the lease counts from when the write started. */
  async renew(): Promise<void> {
    if (this.#resigned || this.#superseded) throw new FerryError('NotLeader', `broker ${this.nodeId} ${this.#resigned ? 'resigned its lease' : 'was taken over by another process'}`);
    const started = this.#lease.renewalStarting();
    const put = this.#writeRecord(this.#options.clock.nowMs());
    this.#renewals.add(put);
    try {
      await put;
    } finally {
      this.#renewals.delete(put);
    }
    this.#lease.renewed(started);
  }

  /**
   * [C1] Writes this broker's record: the first time unconditionally (a new process takes the node
   * id over), then only over the version this process wrote last. A record changed meanwhile by a
   * write of this process whose answer was lost is taken as it is; one another process wrote means
   * that process is this node now: this one steps down for good, before it renews or claims again.
   */
  #writeRecord(renewedAtMs: number): Promise<void> {
    // One at a time ([C7]'s renewal beside the timer's): the record that lands last is the one computed last, so
    // storageFailing as this broker last said it (#saidStorageFailing, the step aside) is what others read.
    const turn = this.#recordWrites.then(() => this.#writeRecordNow(renewedAtMs));
    this.#recordWrites = turn.catch(() => {});
    return turn;
  }

  async #writeRecordNow(renewedAtMs: number): Promise<void> {
    const key = `brokers/${this.nodeId}`;
    const storageFailing = this.#storageFailing();
    this.#noteStorageFailing(storageFailing);
    // [C1] Others take what it leads as soon as they read this record, its lease held or not: it stops
    // acting as leader before the write starts, and acts again only after a scan that follows a renewal without the flag.
    if (storageFailing) this.#lease.yieldToOthers();
    const value: BrokerRecord = {
      ...this.#options.self,
      stream: this.#stream,
      renewedAtMs,
      incarnation: this.#incarnation,
      ...(storageFailing ? { storageFailing: true } : {}),
      ...(this.#peerPort === undefined ? {} : { peerPort: this.#peerPort }),
    };
    for (;;) {
      if (this.#recordEtag === null) {
        this.#recordEtag = await this.#options.control.put(key, value);
        return;
      }
      const written = await this.#options.control.replace(key, { value, etag: this.#recordEtag }, value);
      if (written !== null) {
        this.#recordEtag = written.etag;
        return;
      }
      const now = await this.#options.control.read<BrokerRecord>(key);
      if (now !== null && now.value.incarnation !== this.#incarnation) {
        this.#stepDown(now.value);
        throw new FerryError('NotLeader', `broker ${this.nodeId} was taken over by another process (its record names writer epoch ${now.value.stream.epoch})`);
      }
      this.#recordEtag = now?.etag ?? null; // ours (an answer lost, or a concurrent renewal), or gone: write again
    }
  }

  #noteStorageFailing(failing: boolean): void {
    if (failing === this.#saidStorageFailing) return;
    this.#saidStorageFailing = failing;
    const walFailingMs = this.#options.storage?.walStoreFailingForMs() ?? 0;
    if (failing)
      this.#log.warn(
        { walStoreFailingForMs: walFailingMs },
        `storage failing (${walFailingMs > 0 ? `no write to the WAL store landed for ${Math.round(walFailingMs)} ms` : 'local writes fail'}): acting as leader of nothing, others take over what this broker leads`,
      );
    else this.#log.info({}, 'storage works again: this broker may lead');
  }

  /** Another process is this node id now: let go of everything led here and claim nothing again. */
  #stepDown(record: BrokerRecord): void {
    if (this.#superseded) return;
    this.#superseded = true;
    this.#log.error(
      { nodeId: this.nodeId, writerId: record.stream.writerId, epoch: record.stream.epoch },
      `another process took over node id ${this.nodeId} (writing ${record.stream.writerId}/${record.stream.epoch}): leading nothing from now on`,
    );
    void this.#served.releaseAll().catch((error: unknown) => this.#log.error({ err: error }, `letting go after a takeover of node id ${this.nodeId} failed: ${String(error)}`));
  }
}
