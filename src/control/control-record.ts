import type { Authorship } from '../store/object-store.ts';
import type { Random } from '../util/random.ts';
import { randomUuid } from '../util/uuid.ts';

/**
 * [CW1] Who wrote one version of a control record (docs/cluster-protocol.md, "Conditional writes
 * and ambiguous answers"): a nonce drawn for that one write, and the incarnation of the process
 * (or ControlStore) that wrote it. A read-back after an ambiguous answer proves authorship by the
 * nonce; equal values prove nothing (two brokers racing on `producer-ids` both write
 * `{next: n + 1000}`). The incarnation says, to a person reading the store, who wrote it.
 */
export interface ControlRecordAuthor {
  readonly nonce: string;
  readonly incarnation: string;
}

/**
 * A control record as stored: `{"envelope":1,"nonce":...,"incarnation":...,"value":...}`. The
 * marker tells an enveloped record from one written before envelopes (a bare JSON value), which
 * still reads as its value, authored by no one.
 */
interface Envelope {
  readonly envelope: typeof ENVELOPE_VERSION;
  readonly nonce: string;
  readonly incarnation: string;
  readonly value: unknown;
}

const ENVELOPE_VERSION = 1;

/** A fresh author for one write: a new nonce (drawn from `random`, so a simulation replays it) under `incarnation`. */
export function drawAuthor(random: Random, incarnation: string): ControlRecordAuthor {
  return { nonce: randomUuid(random), incarnation };
}

export function encodeControlRecord(value: unknown, author: ControlRecordAuthor): Uint8Array {
  const envelope: Envelope = { envelope: ENVELOPE_VERSION, nonce: author.nonce, incarnation: author.incarnation, value };
  return new TextEncoder().encode(JSON.stringify(envelope));
}

/** The record's value (never the envelope's fields: callers compare values) and its author, null for a record written before envelopes. Throws on bytes that are not JSON. */
export function decodeControlRecord<T>(body: Uint8Array): { value: T; author: ControlRecordAuthor | null } {
  const parsed = JSON.parse(new TextDecoder().decode(body)) as unknown;
  if (!isEnvelope(parsed)) return { value: parsed as T, author: null };
  return { value: parsed.value as T, author: { nonce: parsed.nonce, incarnation: parsed.incarnation } };
}

/** [CW1] The authorship a conditional write of `author` carries: the record under the key is its own only if it bears the same nonce. */
export function authorshipOf(author: ControlRecordAuthor): Authorship {
  return { wrote: (body) => authorOf(body)?.nonce === author.nonce };
}

/** Who wrote `body`, or null: a record written before envelopes, or bytes that are no record at all (someone else's, surely). */
function authorOf(body: Uint8Array): ControlRecordAuthor | null {
  try {
    return decodeControlRecord(body).author;
  } catch {
    return null;
  }
}

function isEnvelope(parsed: unknown): parsed is Envelope {
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) return false;
  const record = parsed as Record<string, unknown>;
  return record.envelope === ENVELOPE_VERSION && typeof record.nonce === 'string' && typeof record.incarnation === 'string' && Object.hasOwn(record, 'value');
}
