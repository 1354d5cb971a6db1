import { ErrorCode } from '../protocol/error-codes.ts';
import { assert } from '../util/assert.ts';
import type { Clock } from '../util/clock.ts';
import { SeededRandom } from '../util/random.ts';
import { SIM_BROKER_PORT, type SimBrokerHost } from './broker-process.ts';
import { type BrokerAddress, type ClientOptions, SimAdmin, type SimClient, SimCommittedOffsetsReader, SimConsumer, SimGroupConsumer, SimProducer } from './client/index.ts';
import type { ClientOp, FetchOp, ProbeResult } from './history.ts';
import { metadataPropagationMsOf } from './history-index.ts';
import type { SimNetwork } from './network.ts';
import type { Scenario } from './scenario.ts';
import { TopicAdminLoad } from './topic-admin-load.ts';
import { ConfigChangeLoad } from './config-change-load.ts';
import { drawBatchBytes, type ProducerShape } from './workload-shapes.ts';
import { RECORD_BATCH_HEADER_BYTES } from '../format/record-batch.ts';
import { SimIntruder, type IntruderTarget } from './client/intruder.ts';
import type { ClientSasl } from './client/sasl.ts';
import type { IntruderKind } from './history.ts';
import { SecurityLoad } from './security-load.ts';
import { SimAccessProber } from './client/access-prober.ts';
import { CredentialBook } from './credential-book.ts';
import { CredentialLoad } from './credential-load.ts';
import { scramMechanismNamed, type ScramMechanism } from '../security/scram/mechanism.ts';
import { drawProberAcls, PROBER_GROUPS, PROBER_NEW_TOPICS, PROBER_TRANSACTIONAL_IDS } from './acl-spells.ts';
import {
  ACL_PROPAGATION_MS,
  ADMIN_USER,
  BROKER_LISTENER,
  BROKER_LISTENER_PORT,
  CLIENT_LISTENER,
  deniableOf,
  drawPassword,
  quotasOf,
  LAPSED_USER,
  MEMBER_USER,
  OUTSIDER_USER,
  PROBER_USER,
  READER_USER,
  setupAcls,
  SIM_GROUP,
  type SimAcl,
  type SimSecurity,
  STRANGER_USER,
} from './security-setup.ts';
import { ProcessGate, SimClock, type SimScheduler } from './scheduler.ts';

/** Between two batches of one producer: drawn in this range (simulated ms). */
const PRODUCE_GAP_MS_MIN = 10;
const PRODUCE_GAP_MS_MAX = 120;
/** Records per batch, at most. */
const BATCH_RECORDS_MAX = 4;
/** A producer with this many batches unfinished waits before adding more (clients hold bounded memory too). */
const PENDING_BATCHES_MAX = 12;
/** What a record of a padded batch takes besides its key, at most (its length, attributes, deltas, a short value, no headers). */
const RECORD_BYTES_MAX = 32;
/** A producer that plays no shape (a test's scenario may name more producers than it drew shapes for). */
const PLAIN_SHAPE: ProducerShape = { lingerMs: 0, burstMax: 1, compression: 'none', batchBytesMax: 0 };
/** Creating the scenario's topics at the start: tries, and the wait between them. */
const SETUP_MS_MAX = 60_000;
const SETUP_RETRY_MS = 500;
/** When, within the chaos, the admin deletes a topic and creates it again, and the pause between the two. */
const RECREATE_GAP_MS_MIN = 500;
const RECREATE_GAP_MS_MAX = 3_000;
const RECREATES_MAX = 2;
/** A probe's wait between two failed attempts. */
const PROBE_RETRY_MS = 250;
const GROUP = SIM_GROUP;
/**
 * A group member's session timeout, drawn: short ones so that members' stalls and zombie spells
 * (client/group-lapses.ts) outlast them within a run; each at least three heartbeat intervals (1 s),
 * as Kafka advises.
 */
const GROUP_SESSION_TIMEOUTS_MS = [3_000, 6_000, 10_000];
/**
 * Of a secured run's legitimate clients, the share that speak SaslHandshake v0 (bare tokens,
 * KIP-43's first form), in runs whose sessions do not end: a v0 client cannot re-authenticate, so
 * where sessions end the broker closes its connection at each end and it logs in anew, a SCRAM
 * login (4096 HMACs) a connection every few seconds (the expired-session intruder covers that path).
 */
const BARE_TOKENS_SHARE = 0.2;
/** In a run that tiers: consumers started late in the chaos from the earliest offset, so their reads reach what only the tier holds. */
const LATE_READERS = 2;
/** Late readers start in the second half of the chaos, once segments have rolled and been tiered. */
const LATE_READER_START_SHARE = 0.5;
/** The access prober's mean simulated ms between two questions (issue 25): a hundred or two over a run's chaos, each a small request. */
const PROBE_INTERVAL_MS_MEAN = 250;

export type RunFor = (ms: number, done?: () => boolean) => Promise<number>;

export interface WorkloadOptions {
  readonly scenario: Scenario;
  readonly scheduler: SimScheduler;
  readonly network: SimNetwork;
  readonly hosts: readonly SimBrokerHost[];
  readonly record: (op: ClientOp) => void;
  readonly log: (line: string) => void;
  readonly random: SeededRandom;
  /** Draws issue 12's admin operations (topic-admin-load.ts): a stream apart from `random`. */
  readonly adminRandom: SeededRandom;
  /** A secured run's users and passwords (issue 13); null: the clients do not authenticate. */
  readonly security: SimSecurity | null;
  /** Draws what security needs at run time (mechanisms, nonces, intruders' moves): a stream apart from `random`. */
  readonly securityRandom: SeededRandom;
  /** Draws the producers' bursts and batch sizes, and their padding (workload-shapes.ts): a stream apart from `random`. */
  readonly shapesRandom: SeededRandom;
  /** Draws the config changes under load (config-change-load.ts): a stream apart from `random`. */
  readonly configRandom: SeededRandom;
  /** Draws the group members' session timeouts and lapses (client/group-lapses.ts): a stream apart from `random`. */
  readonly groupRandom: SeededRandom;
}

/**
 * The clients of a run and what they do: the admin creates the scenario's topics (and, if the
 * scenario says so, deletes and re-creates one during the chaos); producers send batches at
 * drawn moments to drawn partitions; partition consumers read from the earliest offset; a group
 * of consumers reads every topic and commits; in a run that tiers, late readers start from the
 * earliest offset in the second half of the chaos (reads that reach the tier). Clients run on their own process (never faulted:
 * faults are the brokers'), on the simulation's clock. After the chaos, probes write to and read
 * from every partition (liveness), and the clients drain.
 */
export class SimWorkload {
  readonly #options: WorkloadOptions;
  readonly #clock: Clock;
  readonly #random: SeededRandom;
  readonly #admin: SimAdmin;
  readonly #clients: SimClient[] = [];
  readonly #producers: SimProducer[] = [];
  readonly #topics: Map<string, number>;
  /** Sees every op as it is recorded (the probes watch for their reads). */
  readonly #watchers = new Set<(op: ClientOp) => void>();
  readonly #record: (op: ClientOp) => void;
  #producing = false;
  /** Set when the probes begin: the topics change no more (no re-create round starts). */
  #chaosOver = false;
  /** A delete-and-create round of `#recreateLoop` is under way (the probes wait for it to end). */
  #recreating = false;
  /** The topic a re-create round is under way for (null: none). */
  #recreatingTopic: string | null = null;
  readonly #topicAdmin: TopicAdminLoad;
  /**
   * Names the workload sent a DeleteTopics for: only these may be gone at the probes by a late
   * delete. Any other final topic found gone vanished by a bug, and the probes must show it.
   */
  readonly #deletesSent = new Set<string>();
  #clientCount = 0;
  /** Each legitimate client's user, in a secured run. */
  readonly #users = new Map<string, string>();
  /** The setup ACLs of a secured run: the legitimate clients' and the access prober's (drawn). */
  #setupAcls: SimAcl[] = [];
  /** The passwords the legitimate clients use (a secured run's; SCRAM's change when the run draws it). */
  readonly #credentials: CredentialBook | null;
  #stopped = false;

  constructor(options: WorkloadOptions) {
    this.#options = options;
    this.#clock = new SimClock(options.scheduler, new ProcessGate('clients'));
    this.#random = options.random;
    this.#topics = new Map(options.scenario.topics.map((topic) => [topic.name, topic.partitions]));
    this.#credentials = options.security === null ? null : new CredentialBook(options.security.passwords);
    this.#record = (op: ClientOp) => {
      options.record(op);
      this.#topicAdmin.observe(op);
      for (const watcher of this.#watchers) watcher(op);
    };
    this.#admin = new SimAdmin(this.#clientOptions('admin', ADMIN_USER));
    this.#topicAdmin = new TopicAdminLoad({
      admin: this.#admin,
      clock: this.#clock,
      random: options.adminRandom,
      topics: this.#topics,
      chaosMs: options.scenario.chaosMs,
      over: () => this.#chaosOver,
      recreating: (topic) => this.#recreatingTopic === topic,
      log: options.log,
    });
  }

  /** The topics as they are at the end, for the audit of every replica's log. */
  finalTopics(): { readonly name: string; readonly partitions: number }[] {
    return [...this.#topics].map(([name, partitions]) => ({ name, partitions }));
  }

  /** Each legitimate client's user (a secured run's history names them). */
  users(): Record<string, string> {
    return Object.fromEntries(this.#users);
  }

  /**
   * Creates the scenario's topics, trying again until each exists; in a secured run then the ACLs
   * of what each client does (CreateAcls), and waits until every broker read them.
   */
  async setup(runFor: RunFor): Promise<void> {
    const { scenario, security } = this.#options;
    let done = false;
    const create = async () => {
      for (const topic of scenario.topics) {
        await this.#createUntilItExists(topic.name, topic.partitions);
      }
      if (security !== null) {
        const proberRandom = new SeededRandom(this.#options.securityRandom.nextInt(0x1_0000_0000));
        this.#setupAcls = [...setupAcls(scenario, security.scenario), ...drawProberAcls(proberRandom, PROBER_USER, [...this.#topics.keys()])];
        for (const acl of this.#setupAcls) {
          while (!(await this.#admin.createAcl(acl)).ok) await this.#sleep(SETUP_RETRY_MS);
        }
        for (const { user, key, bytesPerSecond } of quotasOf(scenario, security.scenario)) {
          while (!(await this.#admin.alterQuota(user, key, bytesPerSecond)).ok) await this.#sleep(SETUP_RETRY_MS);
        }
        await this.#sleep(ACL_PROPAGATION_MS);
      }
      done = true;
    };
    void create();
    await runFor(SETUP_MS_MAX, () => done);
    if (!done) this.#options.log('setup: the topics (and ACLs) were not all created in time');
  }

  start(): void {
    const { scenario } = this.#options;
    this.#producing = true;
    scenario.producers.forEach((spec, i) => {
      const shape = scenario.shapes.producers[i] ?? PLAIN_SHAPE;
      const shapeRandom = new SeededRandom(this.#options.shapesRandom.nextInt(0x1_0000_0000));
      const paddingPool = drawBytes(shapeRandom, shape.batchBytesMax);
      const shaping = { lingerMs: shape.lingerMs, compression: shape.compression, paddingPool };
      const producer = new SimProducer({ ...this.#clientOptions(spec.name, spec.name), idempotent: spec.idempotent, acks: spec.acks, ...shaping });
      this.#producers.push(producer);
      this.#startClient(producer);
      void this.#produceLoop(producer, shape, shapeRandom);
    });
    for (let i = 0; i < scenario.partitionConsumers; i++) {
      const [topic, partition] = this.#drawPartition();
      this.#startClient(new SimConsumer({ ...this.#clientOptions(`c${i}`, READER_USER), topic, partition, startOffset: 'earliest' }));
    }
    for (let i = 0; i < scenario.groupConsumers; i++) this.#startClient(this.#groupMember(`g${i}`));
    if (scenario.recreateTopics) void this.#recreateLoop();
    if (scenario.tier !== null) void this.#startLateReaders();
    void this.#topicAdmin.run();
    void new ConfigChangeLoad({
      admin: this.#admin,
      clock: this.#clock,
      random: this.#options.configRandom,
      topics: () => [...this.#topics.keys()],
      chaosMs: scenario.chaosMs,
      replicationFactor: scenario.replicationFactor,
      over: () => this.#chaosOver,
    }).run();
    this.#startSecurityLoad();
  }

  /** A member of the run's group, with a drawn session timeout and lapses of its own until the chaos is over. */
  #groupMember(name: string): SimGroupConsumer {
    const { scenario, groupRandom } = this.#options;
    return new SimGroupConsumer({
      ...this.#clientOptions(name, MEMBER_USER),
      group: GROUP,
      topics: scenario.topics.map((t) => t.name),
      sessionTimeoutMs: GROUP_SESSION_TIMEOUTS_MS[groupRandom.nextInt(GROUP_SESSION_TIMEOUTS_MS.length)]!,
      lapses: { random: new SeededRandom(groupRandom.nextInt(0x1_0000_0000)), over: () => this.#chaosOver },
    });
  }

  /** A secured run's intruders and access prober, and its ACL and credential changes when it draws them. */
  #startSecurityLoad(): void {
    const { scenario, security, securityRandom } = this.#options;
    if (security === null) return;
    for (const kind of security.scenario.intruders) this.#startClient(this.#intruder(kind, security));
    this.#startClient(this.#accessProber());
    // Both streams drawn whatever the run does with them: a run without one change load draws the rest as it would with it.
    const aclRandom = new SeededRandom(securityRandom.nextInt(0x1_0000_0000));
    const credentialRandom = new SeededRandom(securityRandom.nextInt(0x1_0000_0000));
    if (security.scenario.credentialChanges) this.#startCredentialLoad(security, credentialRandom);
    if (!security.scenario.aclChanges) return;
    // The legitimate clients' setup ALLOWs may be revoked, and the prober's ACLs; never the expired-session intruder's (its rights are fixed).
    const lapsed = `User:${LAPSED_USER}`;
    void new SecurityLoad({
      admin: this.#admin,
      clock: this.#clock,
      random: aclRandom,
      menu: { prober: PROBER_USER, deniable: deniableOf(scenario, security.scenario), revocable: this.#setupAcls.filter((acl) => acl.principal !== lapsed) },
      topics: () => [...this.#topics.keys()],
      chaosMs: scenario.chaosMs,
      over: () => this.#chaosOver,
      stopped: () => this.#stopped,
      log: this.#options.log,
    }).run();
  }

  /** SCRAM credential changes of the legitimate clients' users (not the brokers', the admin's or the intruders'). */
  #startCredentialLoad(security: SimSecurity, random: SeededRandom): void {
    const { scenario } = this.#options;
    const users = [...scenario.producers.map((producer) => producer.name), READER_USER, ...(scenario.groupConsumers > 0 ? [MEMBER_USER] : []), PROBER_USER];
    const mechanisms = security.scenario.mechanisms.map(scramMechanismNamed).filter((mechanism): mechanism is ScramMechanism => mechanism !== null);
    void new CredentialLoad({
      admin: this.#admin,
      clock: this.#clock,
      random,
      book: this.#credentials!,
      users,
      mechanisms,
      chaosMs: scenario.chaosMs,
      over: () => this.#chaosOver,
      stopped: () => this.#stopped,
      log: this.#options.log,
    }).run();
  }

  /** The access prober (issue 25): its own random stream, so that the workload's draws stay as they were. */
  #accessProber(): SimAccessProber {
    const random = new SeededRandom(this.#options.securityRandom.nextInt(0x1_0000_0000));
    const targets = { topics: () => [...this.#topics.keys()], groups: PROBER_GROUPS, transactionalIds: PROBER_TRANSACTIONAL_IDS, newTopics: PROBER_NEW_TOPICS };
    return new SimAccessProber({ ...this.#clientOptions('prober', PROBER_USER, random), targets, intervalMsMean: PROBE_INTERVAL_MS_MEAN, over: () => this.#chaosOver });
  }

  #intruder(kind: IntruderKind, security: SimSecurity): SimIntruder {
    const { network, hosts, scheduler, securityRandom } = this.#options;
    const random = new SeededRandom(securityRandom.nextInt(0x1_0000_0000));
    const { mechanisms, interBrokerListener, interBrokerMechanism } = security.scenario;
    const targets: IntruderTarget[] = hosts.flatMap((host) => [
      { node: host.settings.nodeId, host: host.host, port: SIM_BROKER_PORT, listener: CLIENT_LISTENER, mechanisms },
      ...(interBrokerListener === 'separate' ? [{ node: host.settings.nodeId, host: host.host, port: BROKER_LISTENER_PORT, listener: BROKER_LISTENER, mechanisms: [interBrokerMechanism] }] : []),
    ]);
    const users = [...security.passwords.keys()];
    const claimed = kind === 'no-acl' ? OUTSIDER_USER : kind === 'expired-session' ? LAPSED_USER : kind === 'unknown-user' ? STRANGER_USER : users[random.nextInt(users.length)]!;
    // A wrong password is never the right one (drawn passwords are 12 characters; this one 13).
    const password = kind === 'no-acl' || kind === 'expired-session' ? security.passwords.get(claimed)! : `${drawPassword(random)}x`;
    const name = `x-${kind}`;
    return new SimIntruder({
      name,
      kind,
      network: network.host(`client-${name}-${this.#clientCount++}`, new ProcessGate(`client ${name}`)),
      clock: this.#clock,
      now: () => scheduler.nowMs,
      random,
      record: this.#record,
      targets,
      username: claimed,
      password,
      topics: () => [...this.#topics],
      group: GROUP,
    });
  }

  /** Reads of old offsets (docs/tier-protocol.md [D2]): each late reader starts from the earliest offset of a drawn partition. */
  async #startLateReaders(): Promise<void> {
    const { chaosMs } = this.#options.scenario;
    let startedMs = 0;
    for (let i = 0; i < LATE_READERS; i++) {
      const atMs = chaosMs * (LATE_READER_START_SHARE + this.#random.next() * (1 - LATE_READER_START_SHARE));
      await this.#sleep(Math.max(0, atMs - startedMs));
      startedMs = Math.max(startedMs, atMs);
      if (this.#chaosOver) return;
      const [topic, partition] = this.#drawPartition();
      this.#startClient(new SimConsumer({ ...this.#clientOptions(`r${i}`, READER_USER), topic, partition, startOffset: 'earliest' }));
    }
  }

  /**
   * After the faults: each partition of the final topics must take an acks=all write and serve it
   * back, each within `boundMs` of `quietFromMs`. A probe that does not succeed in time is null.
   */
  async probe(quietFromMs: number, boundMs: number, runFor: RunFor): Promise<ProbeResult[]> {
    const { scheduler } = this.#options;
    const deadline = quietFromMs + boundMs;
    await this.#settleTopics(deadline, runFor); // the counts may grow here (a CreatePartitions of unknown outcome)
    const probes = this.finalTopics().flatMap((topic) =>
      Array.from({ length: topic.partitions }, (_, partition) => ({ topic: topic.name, partition, writeAfterMs: null as number | null, readAfterMs: null as number | null, done: false })),
    );
    const producer = new SimProducer({ ...this.#clientOptions('probe', ADMIN_USER), idempotent: true, acks: -1 });
    this.#startClient(producer);
    for (const probe of probes) {
      void (async () => {
        while (scheduler.nowMs < deadline) {
          const result = await producer.produce(probe.topic, probe.partition, 1);
          if (result.ok && result.baseOffset !== null) {
            probe.writeAfterMs = scheduler.nowMs - quietFromMs;
            const readAt = await this.#readBack(probe.topic, probe.partition, result.baseOffset, result.values[0]!, deadline);
            if (readAt !== null) probe.readAfterMs = readAt - quietFromMs;
            break;
          }
          await this.#sleep(PROBE_RETRY_MS);
        }
        probe.done = true;
      })();
    }
    await runFor(boundMs, () => probes.every((probe) => probe.done));
    return probes.map(({ topic, partition, writeAfterMs, readAfterMs }) => ({ topic, partition, writeAfterMs, readAfterMs }));
  }

  /**
   * Before the probes, the final topics must stand. A re-create round under way at the quiet
   * finishes first (probing a topic about to be deleted judges an incarnation that ends). Then a
   * delete the admin saw time out may still take effect: its request can sit unread in a paused
   * broker until the quiet resumes it, and DeleteTopics names the topic, so it deletes whichever
   * incarnation stands then (Kafka's brokers do the same; the request carries no deadline). Once
   * every broker runs and the metadata propagated, a final topic that is gone is created again:
   * recorded as a create, it ends the incarnation that delete removed.
   */
  async #settleTopics(deadlineMs: number, runFor: RunFor): Promise<void> {
    const { scenario, scheduler } = this.#options;
    this.#chaosOver = true;
    // A CreatePartitions sent in the chaos may be answered after it (seed 40068: held by a paused
    // broker until the quiet resumed it): its count, or its unknown outcome, is known only then.
    if (this.#topicAdmin.inFlight) await runFor(Math.max(0, deadlineMs - scheduler.nowMs), () => !this.#topicAdmin.inFlight);
    await this.#settlePartitionCounts(deadlineMs, runFor);
    if (!scenario.recreateTopics) return;
    await runFor(Math.max(0, deadlineMs - scheduler.nowMs), () => !this.#recreating);
    await runFor(metadataPropagationMsOf(scenario));
    let standing = false;
    void (async () => {
      for (const topic of this.finalTopics()) {
        if (this.#deletesSent.has(topic.name) && !(await this.#known(topic.name))) await this.#createUntilItExists(topic.name, topic.partitions, deadlineMs);
      }
      standing = true;
    })();
    await runFor(Math.max(0, deadlineMs - scheduler.nowMs), () => standing);
  }

  /**
   * A CreatePartitions whose outcome is unknown may have grown its topic: once the change
   * propagated, Metadata says how many partitions to probe (never fewer than known to exist).
   */
  async #settlePartitionCounts(deadlineMs: number, runFor: RunFor): Promise<void> {
    const { scenario, scheduler } = this.#options;
    const topics = [...this.#topicAdmin.unsettled];
    if (topics.length === 0) return;
    await runFor(metadataPropagationMsOf(scenario));
    let settled = false;
    void (async () => {
      for (const name of topics) {
        while (scheduler.nowMs < deadlineMs) {
          const topic = (await this.#admin.describe([name]))?.topics.find((t) => t.name === name);
          if (topic !== undefined && topic.errorCode === ErrorCode.NONE) {
            this.#topicAdmin.grow(name, topic.partitions.length);
            break;
          }
          await this.#sleep(SETUP_RETRY_MS);
        }
      }
      settled = true;
    })();
    await runFor(Math.max(0, deadlineMs - scheduler.nowMs), () => settled);
  }

  /** No new batches; what is in flight finishes (within `drainMs`); then every client stops. */
  async stop(drainMs: number, runFor: RunFor): Promise<void> {
    this.#producing = false;
    this.#stopped = true;
    await runFor(drainMs, () => this.#producers.every((producer) => producer.pending === 0));
    let stopped = false;
    void Promise.all([...this.#clients, this.#admin].map((client) => client.stop())).then(() => void (stopped = true));
    await runFor(drainMs, () => stopped);
  }

  /**
   * Once the clients stopped: the group's committed offsets as they stand, read from its
   * coordinator (an OffsetFetchOp per partition of the final topics), within `boundMs`.
   */
  async readCommittedOffsets(boundMs: number, runFor: RunFor): Promise<void> {
    if (this.#options.scenario.groupConsumers === 0) return;
    const reader = new SimCommittedOffsetsReader({ ...this.#clientOptions('offsets-reader', ADMIN_USER), group: GROUP });
    let done = false;
    void reader.read(this.finalTopics(), boundMs).then(() => void (done = true));
    await runFor(boundMs, () => done);
    await reader.stop();
  }

  /** Reads `topic`/`partition` from `offset` until the probe's value shows up; resolves to when, or null at the deadline. */
  #readBack(topic: string, partition: number, offset: number, value: string, deadlineMs: number): Promise<number | null> {
    const consumer = new SimConsumer({ ...this.#clientOptions(`probe-reader-${topic}-${partition}`, ADMIN_USER), topic, partition, startOffset: offset });
    return new Promise((resolve) => {
      const finish = (atMs: number | null) => {
        this.#watchers.delete(watch);
        timer.cancel();
        void consumer.stop();
        resolve(atMs);
      };
      const watch = (op: ClientOp) => {
        if (op.kind === 'fetch' && op.client === consumer.name && (op as FetchOp).records.some((r) => r.offset === offset && r.value === value)) finish(this.#options.scheduler.nowMs);
      };
      const timer = this.#clock.setTimer(Math.max(0, deadlineMs - this.#options.scheduler.nowMs), () => finish(null));
      this.#watchers.add(watch);
      this.#startClient(consumer);
    });
  }

  /** A producer's batches at drawn moments: a burst of them at each (its shape's), each to a drawn partition, padded to a drawn size. */
  async #produceLoop(producer: SimProducer, shape: ProducerShape, shapeRandom: SeededRandom): Promise<void> {
    while (this.#producing) {
      // A burst of b batches comes after b gaps: bursts shape the requests, not how much a run produces.
      const burst = 1 + shapeRandom.nextInt(shape.burstMax);
      await this.#sleep(burst * (PRODUCE_GAP_MS_MIN + this.#random.next() * (PRODUCE_GAP_MS_MAX - PRODUCE_GAP_MS_MIN)));
      if (!this.#producing || producer.pending >= PENDING_BATCHES_MAX) continue;
      for (let i = 0; i < burst; i++) {
        const [topic, partition] = this.#drawPartition();
        const count = 1 + this.#random.nextInt(BATCH_RECORDS_MAX);
        const padding = Math.max(0, drawBatchBytes(shapeRandom, shape) - RECORD_BATCH_HEADER_BYTES - count * RECORD_BYTES_MAX);
        void producer.produce(topic, partition, count, padding);
      }
    }
  }

  /** Deletes a topic and creates it again (same name and shape: a new incarnation), a few times. */
  async #recreateLoop(): Promise<void> {
    const { scenario } = this.#options;
    const [name] = [...this.#topics][this.#random.nextInt(this.#topics.size)]!;
    for (let round = 0; round < RECREATES_MAX && !this.#chaosOver; round++) {
      await this.#sleep(this.#random.next() * scenario.chaosMs * 0.4);
      if (this.#chaosOver) return;
      this.#recreating = true;
      this.#recreatingTopic = name;
      // Until the delete surely happened: a create that meets the old incarnation (a delete that
      // never reached the broker, or stopped halfway) answers TOPIC_ALREADY_EXISTS, not a new topic.
      this.#deletesSent.add(name);
      for (;;) {
        const outcome = await this.#admin.deleteTopic(name);
        if (outcome.ok || outcome.error === 'UNKNOWN_TOPIC_OR_PARTITION') break;
        await this.#sleep(SETUP_RETRY_MS);
      }
      await this.#sleep(RECREATE_GAP_MS_MIN + this.#random.next() * (RECREATE_GAP_MS_MAX - RECREATE_GAP_MS_MIN));
      await this.#createUntilItExists(name, this.#topics.get(name)!); // as many as it grew to
      this.#recreating = false;
      this.#recreatingTopic = null;
    }
  }

  /**
   * Creates a topic, trying again until it exists. TOPIC_ALREADY_EXISTS is also Kafka's answer
   * for a name whose delete is still under way (a delete answered with an error may have begun):
   * the topic counts as there only once Metadata knows it.
   */
  async #createUntilItExists(name: string, partitions: number, deadlineMs = Infinity): Promise<void> {
    while (this.#options.scheduler.nowMs < deadlineMs) {
      const outcome = await this.#admin.createTopic(name, partitions, this.#options.scenario.replicationFactor, this.#topicConfigs());
      if (outcome.ok) return;
      if (outcome.error === 'TOPIC_ALREADY_EXISTS' && (await this.#known(name))) return;
      await this.#sleep(SETUP_RETRY_MS);
    }
  }

  /** The configs every topic incarnation is created with: the run's max.message.bytes, if it draws one. */
  #topicConfigs(): { name: string; value: string }[] {
    const { maxMessageBytes } = this.#options.scenario.shapes;
    return maxMessageBytes === null ? [] : [{ name: 'max.message.bytes', value: String(maxMessageBytes) }];
  }

  /** Whether Metadata (from whichever broker answers) knows the topic; false when none answers. */
  async #known(name: string): Promise<boolean> {
    const metadata = await this.#admin.describe([name]);
    const topic = metadata?.topics.find((t) => t.name === name);
    return topic !== undefined && topic.errorCode !== ErrorCode.UNKNOWN_TOPIC_OR_PARTITION;
  }

  #drawPartition(): [string, number] {
    const topics = [...this.#topics];
    const [name, partitions] = topics[this.#random.nextInt(topics.length)]!;
    return [name, this.#random.nextInt(partitions)];
  }

  #startClient(client: SimClient): void {
    this.#clients.push(client);
    client.start();
  }

  /** `user`: who the client authenticates as in a secured run; `random`: its own stream (by default drawn from the workload's). */
  #clientOptions(name: string, user: string, random?: SeededRandom): ClientOptions {
    assert(!this.#clients.some((client) => client.name === name), `client names are unique (${name})`);
    const { network, hosts, scheduler } = this.#options;
    const bootstrap: BrokerAddress[] = hosts.map((host) => ({ host: host.host, port: SIM_BROKER_PORT }));
    return {
      name,
      network: network.host(`client-${name}-${this.#clientCount++}`, new ProcessGate(`client ${name}`)),
      clock: this.#clock,
      now: () => scheduler.nowMs,
      random: random ?? new SeededRandom(this.#random.nextInt(0x1_0000_0000)),
      record: this.#record,
      bootstrap,
      sasl: this.#sasl(name, user),
      answerOrigin: (chunk) => network.origin(chunk),
    };
  }

  /** How a legitimate client authenticates in a secured run (null in others): a drawn enabled mechanism, sometimes SaslHandshake v0. */
  #sasl(name: string, user: string): ClientSasl | null {
    const { security, securityRandom } = this.#options;
    if (security === null) return null;
    this.#users.set(name, user);
    const { mechanisms } = security.scenario;
    const mechanism = mechanisms[securityRandom.nextInt(mechanisms.length)]!;
    const bareTokens = securityRandom.next() < BARE_TOKENS_SHARE && security.scenario.reauthMs === 0;
    const book = this.#credentials!;
    return {
      mechanism,
      username: user,
      get password() {
        return book.credentialOf(user, mechanism).password;
      },
      get credential() {
        return book.credentialOf(user, mechanism).number;
      },
      bareTokens,
      random: new SeededRandom(securityRandom.nextInt(0x1_0000_0000)),
    };
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => void this.#clock.setTimer(ms, resolve));
  }
}

/** `length` bytes drawn from `random`: padding that no codec shrinks, so a padded batch is as large on the wire as drawn. */
function drawBytes(random: SeededRandom, length: number): Uint8Array {
  const bytes = new Uint8Array(length);
  for (let i = 0; i < length; i += 4) {
    const word = random.nextInt(0x1_0000_0000);
    for (let j = 0; j < 4 && i + j < length; j++) bytes[i + j] = (word >>> (8 * j)) & 0xff;
  }
  return bytes;
}
