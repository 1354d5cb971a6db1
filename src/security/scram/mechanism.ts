import { assert } from '../../util/assert.ts';

/**
 * The SCRAM mechanisms Kafka speaks (RFC 5802 with RFC 7677's SHA-256, and SHA-512), as Kafka's
 * ScramMechanism enum: the SASL name, the int8 type AlterUserScramCredentials and
 * DescribeUserScramCredentials carry, the hash, and the iteration bounds.
 */
export interface ScramMechanism {
  /** The SASL mechanism name: `SCRAM-SHA-256`. */
  readonly name: string;
  /** Kafka's type byte on the wire (org.apache.kafka.clients.admin.ScramMechanism): 0 is UNKNOWN. */
  readonly type: number;
  /** The node:crypto digest name. */
  readonly hash: string;
  /** The digest's length: of StoredKey, ServerKey, a salted password, a proof and a signature. */
  readonly keyBytes: number;
  /** Kafka refuses a credential with fewer iterations, at login and at AlterUserScramCredentials. */
  readonly iterationsMin: number;
  /** AlterUserScramCredentials refuses more (ScramControlManager.MAX_ITERATIONS). */
  readonly iterationsMax: number;
}

/**
 * Kafka's minimum (ScramMechanism.minIterations): every salted-password derivation a client or an
 * admin does costs at least this many HMACs.
 */
export const SCRAM_ITERATIONS_MIN = 4096;
/**
 * Kafka's maximum for a credential (ScramControlManager.MAX_ITERATIONS). A client pays this many
 * HMACs per login (~10 ms of SHA-512 here), so it is also the most a Ferry client accepts from a
 * server: a hostile server cannot make it spin for minutes.
 */
export const SCRAM_ITERATIONS_MAX = 16384;
/** What `ferry users add` and kafka-configs use when told nothing (Kafka's default). */
export const SCRAM_ITERATIONS_DEFAULT = 4096;

export const SCRAM_SHA_256: ScramMechanism = Object.freeze({ name: 'SCRAM-SHA-256', type: 1, hash: 'sha256', keyBytes: 32, iterationsMin: SCRAM_ITERATIONS_MIN, iterationsMax: SCRAM_ITERATIONS_MAX });
export const SCRAM_SHA_512: ScramMechanism = Object.freeze({ name: 'SCRAM-SHA-512', type: 2, hash: 'sha512', keyBytes: 64, iterationsMin: SCRAM_ITERATIONS_MIN, iterationsMax: SCRAM_ITERATIONS_MAX });

export const SCRAM_MECHANISMS: readonly ScramMechanism[] = Object.freeze([SCRAM_SHA_256, SCRAM_SHA_512]);

/** Kafka's type byte of no known mechanism (ScramMechanism.UNKNOWN). */
export const SCRAM_TYPE_UNKNOWN = 0;

export function scramMechanismNamed(name: string): ScramMechanism | null {
  return SCRAM_MECHANISMS.find((mechanism) => mechanism.name === name) ?? null;
}

/** The mechanism of a wire type byte; null for UNKNOWN (0) and every other value. */
export function scramMechanismOfType(type: number): ScramMechanism | null {
  return SCRAM_MECHANISMS.find((mechanism) => mechanism.type === type) ?? null;
}

assert(SCRAM_ITERATIONS_MIN <= SCRAM_ITERATIONS_DEFAULT && SCRAM_ITERATIONS_DEFAULT <= SCRAM_ITERATIONS_MAX, 'the default SCRAM iterations lie within the bounds');
assert(
  SCRAM_MECHANISMS.every((m) => m.type !== SCRAM_TYPE_UNKNOWN),
  'no mechanism takes the UNKNOWN type',
);
