import { assert } from '../util/assert.ts';
import type { Random } from '../util/random.ts';
import type { RequestClass } from './stats.ts';

/**
 * How long an object store request takes in the memory store: a first-byte latency drawn from a
 * lognormal distribution that hits the profile's p50 and p99, plus the body's transfer time at
 * one connection's bandwidth. Lognormal is heavy-tailed enough to give the p99 spikes that shape
 * a produce latency curve, and two percentiles pin it down exactly.
 *
 * The numbers are ASSUMED UNTIL MEASURED ON AWS (docs/design.md, "Latency model"): AWS publishes only
 * "single-digit milliseconds" for S3 Express One Zone. Keep them a parameter; replace them with
 * measurements from bench/ when a run on AWS exists.
 */
export interface Percentiles {
  /** The median. */
  readonly p50Ms: number;
  /** The 99th percentile. */
  readonly p99Ms: number;
}

/** A store's latencies: time to first byte of writes and of reads, and the transfer rate. */
export interface LatencyProfile {
  /** Its name in logs and benchmark tables. */
  readonly name: string;
  /** Time to first byte of requests that write: put, parts, multipart create/complete/abort, delete. */
  readonly write: Percentiles;
  /** Time to first byte of requests that read: get, head, list. */
  readonly read: Percentiles;
  /** One connection's transfer rate in bytes per millisecond (1 MB/s = 1000 bytes/ms). */
  readonly bytesPerMs: number;
}

/** S3 Express One Zone, assumed: PUT p50 4 ms / p99 10 ms, GET first byte 2.5 / 8 ms, ~150 MB/s per connection. */
export const S3_EXPRESS_LATENCY: LatencyProfile = {
  name: 's3-express',
  write: { p50Ms: 4, p99Ms: 10 },
  read: { p50Ms: 2.5, p99Ms: 8 },
  bytesPerMs: 150_000,
};

/** S3 Standard, assumed: PUT p50 25 ms / p99 80 ms, GET first byte 15 / 60 ms, ~80 MB/s per connection. */
export const S3_STANDARD_LATENCY: LatencyProfile = {
  name: 's3-standard',
  write: { p50Ms: 25, p99Ms: 80 },
  read: { p50Ms: 15, p99Ms: 60 },
  bytesPerMs: 80_000,
};

/** No latency at all: requests resolve without a timer, for unit tests. */
export const ZERO_LATENCY: LatencyProfile = {
  name: 'zero',
  write: { p50Ms: 0, p99Ms: 0 },
  read: { p50Ms: 0, p99Ms: 0 },
  bytesPerMs: Number.POSITIVE_INFINITY,
};

/** The names of the built-in profiles. */
export type LatencyProfileName = 'zero' | 's3-express' | 's3-standard';

/** The built-in profiles by name. */
export const LATENCY_PROFILES: Readonly<Record<LatencyProfileName, LatencyProfile>> = {
  zero: ZERO_LATENCY,
  's3-express': S3_EXPRESS_LATENCY,
  's3-standard': S3_STANDARD_LATENCY,
};

/** The standard normal quantile of 0.99: p99 = p50 · exp(σ · Z_99). */
const Z_99 = 2.3263478740408408;

const READ_CLASSES: ReadonlySet<RequestClass> = new Set(['get', 'head', 'list']);

export function isZeroProfile(profile: LatencyProfile): boolean {
  return profile.write.p99Ms === 0 && profile.read.p99Ms === 0 && profile.bytesPerMs === Number.POSITIVE_INFINITY;
}

function checkPercentiles(name: string, percentiles: Percentiles): void {
  assert(percentiles.p50Ms >= 0 && Number.isFinite(percentiles.p50Ms), `latency profile ${name}: p50 must be a finite non-negative number`);
  assert(percentiles.p99Ms >= percentiles.p50Ms && Number.isFinite(percentiles.p99Ms), `latency profile ${name}: p99 must be finite and at least p50`);
  assert(percentiles.p50Ms > 0 || percentiles.p99Ms === 0, `latency profile ${name}: p50 of 0 needs p99 of 0`);
}

/** A lognormal sampler through its two percentiles; constant when p50 = p99. */
class LognormalSampler {
  readonly #mu: number;
  readonly #sigma: number;
  readonly #zero: boolean;

  constructor(percentiles: Percentiles) {
    this.#zero = percentiles.p50Ms === 0;
    this.#mu = this.#zero ? 0 : Math.log(percentiles.p50Ms);
    this.#sigma = this.#zero ? 0 : Math.log(percentiles.p99Ms / percentiles.p50Ms) / Z_99;
  }

  /** Two uniform draws every time (Box-Muller), so the random stream stays aligned across profiles. */
  sample(random: Random): number {
    const u1 = 1 - random.next(); // (0, 1]: log is finite
    const u2 = random.next();
    if (this.#zero) return 0;
    const z = Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
    return Math.exp(this.#mu + this.#sigma * z);
  }
}

/** Draws request latencies for one profile from one seeded random source. */
export class LatencyModel {
  /** The profile it draws from. */
  readonly profile: LatencyProfile;
  readonly #random: Random;
  readonly #write: LognormalSampler;
  readonly #read: LognormalSampler;

  constructor(profile: LatencyProfile, random: Random) {
    checkPercentiles(`${profile.name} write`, profile.write);
    checkPercentiles(`${profile.name} read`, profile.read);
    assert(profile.bytesPerMs > 0, `latency profile ${profile.name}: bandwidth must be positive`);
    this.profile = profile;
    this.#random = random;
    this.#write = new LognormalSampler(profile.write);
    this.#read = new LognormalSampler(profile.read);
  }

  /** Whether every request takes no time (the `zero` profile): no timers at all. */
  get isZero(): boolean {
    return isZeroProfile(this.profile);
  }

  /** Time to first byte of one request of `requestClass`. */
  firstByteMs(requestClass: RequestClass): number {
    return (READ_CLASSES.has(requestClass) ? this.#read : this.#write).sample(this.#random);
  }

  /** The whole request: first byte plus `bytes` of body at the connection's bandwidth. */
  requestMs(requestClass: RequestClass, bytes: number): number {
    return this.firstByteMs(requestClass) + bytes / this.profile.bytesPerMs;
  }
}
