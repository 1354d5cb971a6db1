/**
 * An intruder (issue 13): a client that knocks at a secured run's listeners again and again and
 * tries the data path without the right to. Each visit opens a connection to a drawn listener,
 * does what its kind does to authenticate, then sends a few data requests (some pipelined behind
 * its SASL exchange, as a client that does not wait for the verdict), and closes. Every request
 * and what came back is an IntruderOp in the history (intruder-no-data and auth-refused judge
 * them):
 * - `wrong-password`: a real user (super users included) with a wrong password;
 * - `unknown-user`: a user no broker knows;
 * - `bad-mechanism`: a SaslHandshake for a mechanism the listener does not enable;
 * - `unauthenticated`: no SASL at all (ApiVersions first, sometimes: the one request allowed);
 * - `no-acl`: a valid user no ACL names: it authenticates, and every data request must be refused
 *   with an authorization error (a forged follower progress report included);
 * - `expired-session`: a valid user with ACLs that never re-authenticates (KIP-368): once its
 *   session's lifetime passed, nothing it sends may be answered.
 */
import { CLOCK_DRIFT_FAULT_RATE_ERROR_MAX } from '../clock-rates.ts';
import { type FetchResponse, IsolationLevel } from '../../broker/apis/fetch.ts';
import type { Decoded } from '../../protocol/message-codec.ts';
import { CoordinatorKeyType } from '../../broker/apis/find-coordinator.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { buildRecordBatch } from '../../format/batch-builder.ts';
import type { Clock } from '../../util/clock.ts';
import type { Network } from '../../util/network.ts';
import type { SeededRandom } from '../../util/random.ts';
import type { ClientOp, IntruderKind, IntruderOp, Outcome } from '../history.ts';
import { ClientConnection, type Reply } from './connection.ts';
import { REQUEST_TIMEOUT_MS_DEFAULT, sleep, type SimClient } from './context.ts';
import { fetchedRecords } from './fetch-records.ts';
import { answeredOutcome, unansweredOutcome } from './outcome.ts';
import { authenticate, type ClientSasl, type SaslChannel, type SaslResult } from './sasl.ts';
import { createTopicsApi, deleteRecordsApi, deleteTopicsApi } from './wire-admin.ts';
import { fetchApi, initProducerIdApi, listOffsetsApi, metadataApi, produceApi } from './wire-data.ts';
import { findCoordinatorApi, joinGroupApi, offsetCommitApi, offsetFetchApi } from './wire-group.ts';
import { apiVersionsApi, saslHandshakeApi } from './wire-security.ts';

/** A listener an intruder may knock at. */
export interface IntruderTarget {
  readonly node: number;
  readonly host: string;
  readonly port: number;
  readonly listener: string;
  readonly mechanisms: readonly string[];
}

export interface IntruderOptions {
  readonly name: string;
  readonly kind: IntruderKind;
  readonly network: Network;
  readonly clock: Clock;
  /** The history's time. */
  readonly now: () => number;
  readonly random: SeededRandom;
  readonly record: (op: ClientOp) => void;
  readonly targets: readonly IntruderTarget[];
  /** Who it claims to be (unauthenticated: ignored). */
  readonly username: string;
  readonly password: string;
  /** The topics as they are now, with their partition counts. */
  readonly topics: () => readonly (readonly [string, number])[];
  readonly group: string;
}

/** Between two visits, at least and at most. */
const VISIT_GAP_MS_MIN = 300;
const VISIT_GAP_MS_MAX = 3_000;
/** Data requests per visit, at most. */
const REQUESTS_PER_VISIT_MAX = 3;
const PIPELINE_SHARE = 0.5;
const BARE_TOKENS_SHARE = 0.3;
const API_VERSIONS_FIRST_SHARE = 0.5;
/**
 * Past the session's end before an expired-session intruder sends: the broker's lifetime runs on
 * its own monotonic clock, which the clock-drift fault slows by up to CLOCK_DRIFT_FAULT_RATE_ERROR_MAX
 * (the wait is stretched by that), and latency adds this (seed 290047: a broker 2 % slow still held
 * a 10 s session 200 ms after it had ended on the intruder's clock).
 */
const PAST_EXPIRY_MS = 200;
/** Offsets an intruder commits lie here: far above anything a run writes, so a legitimate reader seeing one saw the intruder's. */
export const INTRUDER_COMMIT_OFFSET_BASE = 1_000_000_000;
/** A forged follower report's fetch offset: far above any log end, so a leader that took it would count unwritten records as replicated. */
const FORGED_REPORT_OFFSET = 1_000_000;
/** Mechanisms no simulated listener enables (bad-mechanism asks for one, or for an enabled list's complement). */
const FOREIGN_MECHANISMS = ['GSSAPI', 'OAUTHBEARER', 'SCRAM-SHA-1'];
const MECHANISMS = ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'];
const INTRUDER_TOPIC = 'intruder-topic';
const CONSUMER_REPLICA_ID = -1;
const EARLIEST_TIMESTAMP = -2;
const FETCH_BYTES_MAX = 1024 * 1024;

type DataRequest = (visit: Visit) => Promise<void>;

interface Visit {
  readonly connection: ClientConnection;
  readonly target: IntruderTarget;
}

export class SimIntruder implements SimClient {
  readonly #options: IntruderOptions;
  readonly #random: SeededRandom;
  #running = false;
  #loop: Promise<void> = Promise.resolve();
  #connection: ClientConnection | null = null;
  #values = 0;
  #commits = 0;

  constructor(options: IntruderOptions) {
    this.#options = options;
    this.#random = options.random;
  }

  get name(): string {
    return this.#options.name;
  }

  start(): void {
    if (this.#running) return;
    this.#running = true;
    this.#loop = this.#run();
  }

  stop(): Promise<void> {
    this.#running = false;
    this.#connection?.close();
    return this.#loop;
  }

  async #run(): Promise<void> {
    while (this.#running) {
      await sleep(this.#options.clock, VISIT_GAP_MS_MIN + this.#random.next() * (VISIT_GAP_MS_MAX - VISIT_GAP_MS_MIN));
      if (!this.#running) return;
      const target = this.#options.targets[this.#random.nextInt(this.#options.targets.length)]!;
      const connection = await ClientConnection.connect({
        network: this.#options.network,
        clock: this.#options.clock,
        host: target.host,
        port: target.port,
        clientId: this.#options.name,
        requestTimeoutMs: REQUEST_TIMEOUT_MS_DEFAULT,
      });
      if (connection === null) continue;
      this.#connection = connection;
      await this.#visit({ connection, target });
      connection.close();
      this.#connection = null;
    }
  }

  async #visit(visit: Visit): Promise<void> {
    const requests = Array.from({ length: 1 + this.#random.nextInt(REQUESTS_PER_VISIT_MAX) }, () => this.#drawRequest());
    switch (this.#options.kind) {
      case 'unauthenticated':
        if (this.#random.next() < API_VERSIONS_FIRST_SHARE) await this.#apiVersions(visit);
        await Promise.all(requests.map((request) => request(visit)));
        return;
      case 'bad-mechanism':
        return this.#refusedThenData(visit, requests, () => this.#badHandshake(visit));
      case 'wrong-password':
      case 'unknown-user':
        return this.#refusedThenData(visit, requests, (afterFirstToken) => this.#authenticate(visit, this.#random.next() < BARE_TOKENS_SHARE, afterFirstToken));
      case 'no-acl': {
        const result = await this.#authenticate(visit, this.#random.next() < BARE_TOKENS_SHARE);
        if (!result.outcome.ok) return;
        for (const request of requests) await request(visit);
        return;
      }
      case 'expired-session': {
        const result = await this.#authenticate(visit, false);
        if (!result.outcome.ok || result.sessionLifetimeMs <= 0) return;
        await sleep(this.#options.clock, result.sessionLifetimeMs / (1 - CLOCK_DRIFT_FAULT_RATE_ERROR_MAX) + PAST_EXPIRY_MS);
        for (const request of requests) await request(visit);
      }
    }
  }

  /**
   * The exchange, and the data requests: pipelined with the handshake or right behind the first
   * token (not waiting for the verdict, as a client that assumes it), or sent after the verdict.
   */
  async #refusedThenData(visit: Visit, requests: readonly DataRequest[], exchange: (afterFirstToken: (() => void) | null) => Promise<unknown>): Promise<void> {
    const sendAll = () => Promise.all(requests.map((request) => request(visit)));
    const draw = this.#random.next();
    if (draw < PIPELINE_SHARE / 2) {
      await Promise.all([exchange(null), sendAll()]);
    } else if (draw < PIPELINE_SHARE) {
      let sent: Promise<unknown> = Promise.resolve();
      await exchange(() => void (sent = sendAll()));
      await sent;
    } else {
      await exchange(null);
      await sendAll();
    }
  }

  /** `afterFirstToken`: called once the first token is written (pipelined data requests go right behind it). */
  async #authenticate(visit: Visit, bareTokens: boolean, afterFirstToken: (() => void) | null = null): Promise<SaslResult> {
    const { target } = visit;
    const mechanism = target.mechanisms[this.#random.nextInt(target.mechanisms.length)]!;
    const sasl: ClientSasl = { mechanism, username: this.#options.username, password: this.#options.password, bareTokens, random: this.#random };
    const startMs = this.#options.now();
    let pending = afterFirstToken;
    const behind = <T>(written: Promise<T>): Promise<T> => {
      const fire = pending;
      pending = null;
      fire?.();
      return written;
    };
    const channel: SaslChannel = {
      send: (api, request) => (api.name === 'SaslAuthenticate' ? behind(visit.connection.send(api, request)) : visit.connection.send(api, request)),
      exchangeBareToken: (token) => behind(visit.connection.exchangeBareToken(token)),
    };
    const result = await authenticate(channel, sasl);
    pending?.(); // the exchange ended before a token went out: send them now
    this.#record(visit, startMs, result.outcome, { api: 'SaslAuthenticate', authentication: true, mechanism, errorMessage: result.errorMessage });
    return result;
  }

  /** SaslHandshake v1 for a mechanism this listener does not enable: UNSUPPORTED_SASL_MECHANISM, then the connection closes. */
  async #badHandshake(visit: Visit): Promise<void> {
    const foreign = [...FOREIGN_MECHANISMS, ...MECHANISMS.filter((name) => !visit.target.mechanisms.includes(name))];
    const mechanism = foreign[this.#random.nextInt(foreign.length)]!;
    const startMs = this.#options.now();
    const reply = await visit.connection.send(saslHandshakeApi, { mechanism });
    this.#record(
      visit,
      startMs,
      this.#outcome(reply, (response) => response.errorCode),
      { api: 'SaslHandshake', authentication: true, mechanism },
    );
  }

  async #apiVersions(visit: Visit): Promise<void> {
    const startMs = this.#options.now();
    const reply = await visit.connection.send(apiVersionsApi, {});
    this.#record(
      visit,
      startMs,
      this.#outcome(reply, (response) => response.errorCode),
      { api: 'ApiVersions', authentication: true },
    );
  }

  #drawRequest(): DataRequest {
    const requests: DataRequest[] = [
      (visit) => this.#produce(visit),
      (visit) => this.#fetch(visit, CONSUMER_REPLICA_ID),
      (visit) => this.#fetch(visit, this.#options.targets[this.#random.nextInt(this.#options.targets.length)]!.node),
      (visit) => this.#listOffsets(visit),
      (visit) => this.#metadata(visit),
      (visit) => this.#group(visit),
      (visit) => this.#offsetFetch(visit),
      (visit) => this.#offsetCommit(visit),
      (visit) => this.#initProducerId(visit),
      (visit) => this.#admin(visit),
    ];
    return requests[this.#random.nextInt(requests.length)]!;
  }

  #partition(): [string, number] {
    const topics = this.#options.topics();
    const [topic, partitions] = topics[this.#random.nextInt(topics.length)]!;
    return [topic, this.#random.nextInt(partitions)];
  }

  async #produce(visit: Visit): Promise<void> {
    const [topic, partition] = this.#partition();
    const values = Array.from({ length: 1 + this.#random.nextInt(3) }, () => `${this.#options.name}/${this.#values++}`);
    const records = buildRecordBatch(
      values.map((value) => ({ value })),
      { nowMs: this.#options.clock.nowMs() },
    );
    const startMs = this.#options.now();
    const reply = await visit.connection.send(produceApi, {
      transactionalId: null,
      acks: this.#random.next() < 0.5 ? -1 : 1,
      timeoutMs: REQUEST_TIMEOUT_MS_DEFAULT / 2,
      topicData: [{ name: topic, partitionData: [{ index: partition, records }] }],
    });
    this.#record(
      visit,
      startMs,
      this.#outcome(reply, (response) => response.responses[0]?.partitionResponses[0]?.errorCode),
      { api: 'Produce', topic, partition, values },
    );
  }

  /** A consumer's Fetch, or (replicaId >= 0) a forged follower's progress report claiming a far offset. */
  async #fetch(visit: Visit, replicaId: number): Promise<void> {
    const [topic, partition] = this.#partition();
    const fetchOffset = replicaId < 0 ? 0 : FORGED_REPORT_OFFSET;
    const request = {
      replicaId,
      maxWaitMs: 0,
      minBytes: 1,
      maxBytes: FETCH_BYTES_MAX,
      isolationLevel: IsolationLevel.READ_UNCOMMITTED,
      sessionId: 0,
      sessionEpoch: -1,
      topics: [{ topic, partitions: [{ partition, currentLeaderEpoch: -1, fetchOffset, logStartOffset: -1, partitionMaxBytes: FETCH_BYTES_MAX }] }],
      forgottenTopicsData: [],
      rackId: '',
    };
    const startMs = this.#options.now();
    const reply = await visit.connection.send(fetchApi, request);
    const answer = reply.answered ? reply.response.responses[0]?.partitions[0] : undefined;
    let records: IntruderOp['records'] = [];
    try {
      records = answer === undefined ? [] : fetchedRecords(answer.records instanceof Uint8Array ? [answer.records] : answer.records, fetchOffset).records;
    } catch {
      records = [{ offset: -1, value: '(records that did not parse)' }];
    }
    const code = (response: Decoded<FetchResponse>) => (response.errorCode !== ErrorCode.NONE ? response.errorCode : response.responses[0]?.partitions[0]?.errorCode);
    this.#record(visit, startMs, this.#outcome(reply, code), { api: replicaId < 0 ? 'Fetch' : 'Fetch (as a follower)', topic, partition, records });
  }

  async #listOffsets(visit: Visit): Promise<void> {
    const [topic, partition] = this.#partition();
    const startMs = this.#options.now();
    const reply = await visit.connection.send(listOffsetsApi, {
      replicaId: CONSUMER_REPLICA_ID,
      isolationLevel: IsolationLevel.READ_UNCOMMITTED,
      topics: [{ name: topic, partitions: [{ partitionIndex: partition, currentLeaderEpoch: -1, timestamp: EARLIEST_TIMESTAMP, maxNumOffsets: 1 }] }],
    });
    this.#record(
      visit,
      startMs,
      this.#outcome(reply, (response) => response.topics[0]?.partitions[0]?.errorCode),
      { api: 'ListOffsets', topic, partition },
    );
  }

  /** Every topic (null) or the run's topics by name: it may describe none. */
  async #metadata(visit: Visit): Promise<void> {
    const named = this.#random.next() < 0.5 ? null : this.#options.topics().map(([name]) => ({ name }));
    const startMs = this.#options.now();
    const reply = await visit.connection.send(metadataApi, { topics: named, allowAutoTopicCreation: false, includeClusterAuthorizedOperations: false, includeTopicAuthorizedOperations: false });
    const topics = reply.answered ? reply.response.topics.filter((topic) => topic.errorCode === ErrorCode.NONE && topic.name !== null).map((topic) => topic.name!) : [];
    // A Metadata answer naming no broker is a refusal, not metadata: the error response to a request
    // sent in the middle of a SASL exchange (its topics carry the error; an all-topics one has none).
    const refused = reply.answered && reply.response.brokers.length === 0;
    const outcome = !reply.answered
      ? unansweredOutcome(reply.error)
      : refused
        ? answeredOutcome(reply.response.topics.find((topic) => topic.errorCode !== ErrorCode.NONE)?.errorCode ?? ErrorCode.ILLEGAL_SASL_STATE)
        : { ok: true as const };
    this.#record(visit, startMs, outcome, { api: 'Metadata', topics });
  }

  /** FindCoordinator or JoinGroup of the run's group. */
  async #group(visit: Visit): Promise<void> {
    const { group } = this.#options;
    const startMs = this.#options.now();
    if (this.#random.next() < 0.5) {
      const reply = await visit.connection.send(findCoordinatorApi, { key: group, keyType: CoordinatorKeyType.GROUP });
      this.#record(
        visit,
        startMs,
        this.#outcome(reply, (response) => response.errorCode),
        { api: 'FindCoordinator', group },
      );
      return;
    }
    const reply = await visit.connection.send(joinGroupApi, {
      groupId: group,
      sessionTimeoutMs: 10_000,
      rebalanceTimeoutMs: 5_000,
      memberId: '',
      groupInstanceId: null,
      protocolType: 'consumer',
      protocols: [{ name: 'roundrobin', metadata: new Uint8Array(0) }],
    });
    this.#record(
      visit,
      startMs,
      this.#outcome(reply, (response) => response.errorCode),
      { api: 'JoinGroup', group },
    );
  }

  async #offsetFetch(visit: Visit): Promise<void> {
    const { group } = this.#options;
    const [topic, partition] = this.#partition();
    const startMs = this.#options.now();
    const reply = await visit.connection.send(offsetFetchApi, { groupId: group, topics: [{ name: topic, partitionIndexes: [partition] }] });
    const answer = reply.answered ? reply.response.topics[0]?.partitions[0] : undefined;
    const offsets = answer !== undefined && answer.committedOffset >= 0 ? [answer.committedOffset] : [];
    const code = (response: { errorCode: number; topics: readonly { partitions: readonly { errorCode: number }[] }[] }) =>
      response.errorCode !== ErrorCode.NONE ? response.errorCode : response.topics[0]?.partitions[0]?.errorCode;
    this.#record(visit, startMs, this.#outcome(reply, code), { api: 'OffsetFetch', topic, partition, group, offsets });
  }

  /** A commit outside any generation (Kafka's simple consumer commit), of an offset no legitimate consumer reaches. */
  async #offsetCommit(visit: Visit): Promise<void> {
    const { group } = this.#options;
    const [topic, partition] = this.#partition();
    const committedOffset = INTRUDER_COMMIT_OFFSET_BASE + this.#commits++;
    const startMs = this.#options.now();
    const reply = await visit.connection.send(offsetCommitApi, {
      groupId: group,
      generationIdOrMemberEpoch: -1,
      memberId: '',
      groupInstanceId: null,
      retentionTimeMs: -1,
      topics: [{ name: topic, partitions: [{ partitionIndex: partition, committedOffset, committedLeaderEpoch: -1, commitTimestamp: -1, committedMetadata: null }] }],
    });
    this.#record(
      visit,
      startMs,
      this.#outcome(reply, (response) => response.topics[0]?.partitions[0]?.errorCode),
      { api: 'OffsetCommit', topic, partition, group, committedOffset },
    );
  }

  async #initProducerId(visit: Visit): Promise<void> {
    const startMs = this.#options.now();
    const reply = await visit.connection.send(initProducerIdApi, { transactionalId: null, transactionTimeoutMs: 60_000 });
    this.#record(
      visit,
      startMs,
      this.#outcome(reply, (response) => response.errorCode),
      { api: 'InitProducerId' },
    );
  }

  /** What only an admin may do: delete records, create a topic, delete one. */
  async #admin(visit: Visit): Promise<void> {
    const [topic, partition] = this.#partition();
    const startMs = this.#options.now();
    const draw = this.#random.next();
    if (draw < 0.4) {
      const reply = await visit.connection.send(deleteRecordsApi, { topics: [{ name: topic, partitions: [{ partitionIndex: partition, offset: -1 }] }], timeoutMs: REQUEST_TIMEOUT_MS_DEFAULT / 2 });
      this.#record(
        visit,
        startMs,
        this.#outcome(reply, (response) => response.topics[0]?.partitions[0]?.errorCode),
        { api: 'DeleteRecords', topic, partition },
      );
    } else if (draw < 0.8) {
      const reply = await visit.connection.send(createTopicsApi, {
        topics: [{ name: INTRUDER_TOPIC, numPartitions: 1, replicationFactor: 1, assignments: [], configs: [] }],
        timeoutMs: REQUEST_TIMEOUT_MS_DEFAULT / 2,
        validateOnly: false,
      });
      this.#record(
        visit,
        startMs,
        this.#outcome(reply, (response) => response.topics[0]?.errorCode),
        { api: 'CreateTopics', topic: INTRUDER_TOPIC },
      );
    } else {
      const reply = await visit.connection.send(deleteTopicsApi, { topicNames: [topic], timeoutMs: REQUEST_TIMEOUT_MS_DEFAULT / 2 });
      this.#record(
        visit,
        startMs,
        this.#outcome(reply, (response) => response.responses[0]?.errorCode),
        { api: 'DeleteTopics', topic },
      );
    }
  }

  #outcome<Response>(reply: Reply<Response>, codeOf: (response: Response) => number | undefined): Outcome {
    return reply.answered ? answeredOutcome(codeOf(reply.response) ?? ErrorCode.UNKNOWN_SERVER_ERROR) : unansweredOutcome(reply.error);
  }

  #record(visit: Visit, startMs: number, outcome: Outcome, fields: Partial<IntruderOp> & Pick<IntruderOp, 'api'>): void {
    const op: IntruderOp = {
      kind: 'intruder',
      client: this.#options.name,
      node: visit.target.node,
      startMs,
      endMs: this.#options.now(),
      outcome,
      intruder: this.#options.kind,
      authentication: false,
      listener: visit.target.listener,
      mechanism: null,
      topic: null,
      partition: null,
      group: null,
      values: [],
      committedOffset: null,
      records: [],
      topics: [],
      offsets: [],
      errorMessage: null,
      ...fields,
    };
    this.#options.record(op);
  }
}
