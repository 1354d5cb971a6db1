// In-process brokers with security for the authentication tests: a SASL_PLAINTEXT listener (PLAIN
// and SCRAM users below), a PLAINTEXT one, and whatever else a test adds; a clock that a test can
// move forward at once (the session expiry of KIP-368) while timers keep real time.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect } from 'bun:test';
import type { BrokerSecurityOptions } from '../../../src/broker/auth/broker-security.ts';
import type { ListenerConfig, SaslListenerConfig } from '../../../src/broker/auth/listener-config.ts';
import { Broker } from '../../../src/broker/broker.ts';
import { saltedPasswordOf } from '../../../src/security/scram/credential.ts';
import { SCRAM_MECHANISMS } from '../../../src/security/scram/mechanism.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import type { ObjectStore } from '../../../src/store/object-store.ts';
import { type Clock, systemClock } from '../../../src/util/clock.ts';

/** PLAIN's users (the JAAS user_NAME options). */
export const PLAIN_USERS: ReadonlyMap<string, string> = new Map([
  ['alice', 'alice-secret'],
  ['bob', 'bob-secret'],
]);
/** SCRAM users (SCRAM-SHA-256 and -512), in the control records. */
export const SCRAM_USERS: ReadonlyMap<string, string> = new Map([
  ['carol', 'carol-scram'],
  ['dave', 'dave-scram'],
]);
export const SCRAM_ITERATIONS = 4096;

/**
 * The system's time plus an offset a test moves forward (`jump`): what the channel reads for
 * session expiry jumps, while timers (the failed-authentication delay, WAL uploads) keep running
 * on real time.
 */
export class JumpClock implements Clock {
  #offsetMs = 0;

  nowMs(): number {
    return systemClock.nowMs() + Math.floor(this.#offsetMs);
  }

  monotonicMs(): number {
    return systemClock.monotonicMs() + this.#offsetMs;
  }

  setTimer(delayMs: number, callback: () => void, background?: boolean) {
    return systemClock.setTimer(delayMs, callback, background);
  }

  immediate(callback: () => void) {
    return systemClock.immediate(callback);
  }

  jump(ms: number): void {
    this.#offsetMs += ms;
  }
}

export interface SecureBrokerOptions {
  /** The SASL listener's settings beyond its mechanisms and PLAIN users. */
  readonly sasl?: Partial<SaslListenerConfig>;
  /** Listeners added after SASL_PLAINTEXT and PLAINTEXT. */
  readonly extraListeners?: readonly ListenerConfig[];
  /** Only these listeners (the SASL and PLAINTEXT ones are left out). */
  readonly listeners?: readonly ListenerConfig[];
  readonly security?: BrokerSecurityOptions;
  readonly clock?: Clock;
  readonly maxConnections?: number;
  /** queued.max.request.bytes: the request budget every connection shares. */
  readonly queuedMaxRequestBytes?: number;
  /** The WAL store, which also holds the security records (ACLs, SCRAM credentials); a fresh MemoryStore by default. */
  readonly store?: ObjectStore;
  /** The broker's lease (a cluster of one over the WAL store); a test that jumps its clock past the default lease sets a longer one. */
  readonly leaseMs?: number;
}

export interface SecureBroker {
  readonly broker: Broker;
  /** Every line the broker logged. */
  readonly logs: string[];
  readonly clock: Clock;
  port(listener: string): number;
}

export const SASL_LISTENER = 'SASL_PLAINTEXT';
const SCAN_INTERVAL_MS = 1000;
export const PLAINTEXT_LISTENER_NAME = 'PLAINTEXT';

/** Log directories of the brokers started here, removed by stopBrokers (a beforeAll broker outlives tempDir's afterEach). */
const directories = new Map<Broker, string>();

/** Stops the brokers and removes their directories. */
export async function stopBrokers(running: Broker[]): Promise<void> {
  for (const broker of running.splice(0)) {
    await broker.stop().catch(() => {});
    const directory = directories.get(broker);
    directories.delete(broker);
    if (directory !== undefined) rmSync(directory, { recursive: true, force: true });
  }
}

/** Starts a single broker; `running` collects it for stopBrokers. */
export async function startSecureBroker(options: SecureBrokerOptions, running: Broker[]): Promise<SecureBroker> {
  const logs: string[] = [];
  const clock = options.clock ?? systemClock;
  const sasl: SaslListenerConfig = { mechanisms: ['PLAIN', 'SCRAM-SHA-256', 'SCRAM-SHA-512'], plainUsers: () => PLAIN_USERS, ...options.sasl };
  const listeners = options.listeners ?? [
    { name: SASL_LISTENER, protocol: 'SASL_PLAINTEXT', host: '127.0.0.1', port: 0, sasl },
    { name: PLAINTEXT_LISTENER_NAME, protocol: 'PLAINTEXT', host: '127.0.0.1', port: 0 },
    ...(options.extraListeners ?? []),
  ];
  const store = options.store ?? new MemoryStore();
  const directory = mkdtempSync(join(tmpdir(), 'ferry-auth-'));
  const broker = await Broker.start({
    listenHost: '127.0.0.1',
    listenPort: 0,
    nodeId: 1,
    clock,
    log: (line) => void logs.push(line),
    listeners,
    security: options.security ?? {},
    ...(options.maxConnections === undefined ? {} : { maxConnections: options.maxConnections }),
    ...(options.queuedMaxRequestBytes === undefined ? {} : { queuedMaxRequestBytes: options.queuedMaxRequestBytes }),
    ...(options.leaseMs === undefined ? {} : { cluster: { store, leaseMs: options.leaseMs, scanIntervalMs: SCAN_INTERVAL_MS, peerPort: null } }),
    engine: { directory, log: { flush: { kind: 'none' } }, wal: { store, writerId: 'broker-1', config: { uploadIntervalMs: 2 } } },
  });
  running.push(broker);
  directories.set(broker, directory);
  for (const [user, password] of SCRAM_USERS) await addScramUser(broker, user, password);
  return {
    broker,
    logs,
    clock,
    port(listener) {
      const port = broker.portOf(listener);
      if (port === null) throw new Error(`no listener ${listener}`);
      return port;
    },
  };
}

/** Sets a user's SCRAM-SHA-256 and -512 credentials through the broker's store (as AlterUserScramCredentials does). */
export async function addScramUser(broker: Broker, user: string, password: string): Promise<void> {
  for (const mechanism of SCRAM_MECHANISMS) {
    const salt = randomBytes(32);
    const [result] = await broker.context.security.scram.alter(
      [],
      [{ name: user, mechanism: mechanism.type, iterations: SCRAM_ITERATIONS, salt, saltedPassword: saltedPasswordOf(mechanism, password, salt, SCRAM_ITERATIONS) }],
    );
    expect(result?.errorCode).toBe(0);
  }
}

/** The value of `ferry_broker_authentications_total` with these labels (0 when never counted). */
export function authenticationCount(broker: Broker, labels: { listener: string; mechanism: string; result: string }): number {
  const wanted = `ferry_broker_authentications_total{listener="${labels.listener}",mechanism="${labels.mechanism}",result="${labels.result}"}`;
  const line = broker.metrics
    .renderPrometheus()
    .split('\n')
    .find((candidate) => candidate.startsWith(`${wanted} `));
  return line === undefined ? 0 : Number(line.slice(wanted.length + 1));
}
