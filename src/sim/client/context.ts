/**
 * What every simulated client is given: its name, the network, the clock its timers run on, the
 * simulation's global time for the history, a seeded random source and the history it records
 * into. Nothing else reaches a client (docs/design.md contract 8).
 */
import type { Clock } from '../../util/clock.ts';
import type { Network } from '../../util/network.ts';
import type { SeededRandom } from '../../util/random.ts';
import type { AnswerOrigin, ClientOp } from '../history.ts';
import type { ClientSasl } from './sasl.ts';

export interface BrokerAddress {
  readonly host: string;
  readonly port: number;
}

export interface ClientOptions {
  /** Unique in a run: it names the client in the history and starts its record values. */
  readonly name: string;
  readonly network: Network;
  /** Drives every timer (timeouts, backoffs, heartbeats). */
  readonly clock: Clock;
  /** The simulation's global time for startMs and endMs: a broker's skewed clock must not leak in. Defaults to clock.nowMs. */
  readonly now?: () => number;
  readonly random: SeededRandom;
  /** Where each request's op goes when it ends (the run's history). */
  readonly record: (op: ClientOp) => void;
  /** Where to ask for metadata first. */
  readonly bootstrap: readonly BrokerAddress[];
  readonly requestTimeoutMs?: number;
  /** The wait before a retry, jittered by the seed between half and one and a half of it. */
  readonly retryBackoffMs?: number;
  /** How it authenticates on every connection (a SASL listener, issue 13); null or absent: it does not. */
  readonly sasl?: ClientSasl | null;
  /** Who wrote a chunk a connection received, and when (the simulated network's `origin`); absent: unknown. */
  readonly answerOrigin?: (chunk: Uint8Array) => AnswerOrigin | null;
}

/** Kafka's request.timeout.ms is 30 s; the simulation wants faults found in seconds. */
export const REQUEST_TIMEOUT_MS_DEFAULT = 5_000;
/** Kafka's retry.backoff.ms. */
export const RETRY_BACKOFF_MS_DEFAULT = 100;

/** What the simulation does with every client: start it, and stop it (its connections close). */
export interface SimClient {
  readonly name: string;
  start(): void;
  stop(): Promise<void>;
}

/** ClientOptions with the defaults filled in. */
export interface ClientContext extends Required<ClientOptions> {}

export function clientContext(options: ClientOptions): ClientContext {
  return {
    ...options,
    now: options.now ?? (() => options.clock.nowMs()),
    requestTimeoutMs: options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS_DEFAULT,
    retryBackoffMs: options.retryBackoffMs ?? RETRY_BACKOFF_MS_DEFAULT,
    sasl: options.sasl ?? null,
    answerOrigin: options.answerOrigin ?? (() => null),
  };
}

/** Resolves after `delayMs` on the client's clock. */
export function sleep(clock: Clock, delayMs: number): Promise<void> {
  return new Promise((resolve) => void clock.setTimer(delayMs, resolve));
}

/** A retry backoff, jittered by the seed so that clients that failed together do not retry together. */
export function backoffMs(context: ClientContext): number {
  return Math.round(context.retryBackoffMs * (0.5 + context.random.next()));
}
