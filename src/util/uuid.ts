import { assert } from './assert.ts';
import type { Random } from './random.ts';

/**
 * Kafka's Uuid (org.apache.kafka.common.Uuid): 16 bytes, written as Kafka writes it, URL-safe
 * base64 without padding (22 characters), the form `kafka-topics --describe` shows as TopicId.
 */
export type Uuid = string;

export const UUID_BYTES = 16;
const UUID_TEXT_LENGTH = 22;
const UUID_TEXT = /^[A-Za-z0-9_-]{21}[AQgw]$/; // the last character carries 2 bits and 4 zero bits
/** Kafka's reserved values: the zero UUID means "none"; one names the metadata topic. */
export const ZERO_UUID: Uuid = uuidFromBytes(new Uint8Array(UUID_BYTES));
const METADATA_TOPIC_ID: Uuid = uuidFromBytes(Uint8Array.from({ length: UUID_BYTES }, (_, i) => (i === UUID_BYTES - 1 ? 1 : 0)));
const TWO_POW_32 = 0x1_0000_0000;

/**
 * A fresh random (version 4) UUID drawn from `random`, never one of Kafka's reserved values and
 * never one whose text starts with "-" (Kafka avoids those: they read as command-line flags).
 */
export function randomUuid(random: Random): Uuid {
  for (;;) {
    const bytes = new Uint8Array(UUID_BYTES);
    const view = new DataView(bytes.buffer);
    for (let at = 0; at < UUID_BYTES; at += 4) view.setUint32(at, Math.floor(random.next() * TWO_POW_32));
    bytes[6] = (bytes[6]! & 0x0f) | 0x40; // version 4
    bytes[8] = (bytes[8]! & 0x3f) | 0x80; // the IETF variant
    const uuid = uuidFromBytes(bytes);
    if (uuid !== ZERO_UUID && uuid !== METADATA_TOPIC_ID && !uuid.startsWith('-')) return uuid;
  }
}

export function isUuid(value: unknown): value is Uuid {
  return typeof value === 'string' && value.length === UUID_TEXT_LENGTH && UUID_TEXT.test(value);
}

export function uuidToBytes(uuid: Uuid): Uint8Array {
  assert(isUuid(uuid), `${JSON.stringify(uuid)} is not a UUID in Kafka's base64 form`);
  const bytes = Buffer.from(uuid, 'base64url');
  return new Uint8Array(bytes.buffer, bytes.byteOffset, UUID_BYTES);
}

export function uuidFromBytes(bytes: Uint8Array): Uuid {
  assert(bytes.length === UUID_BYTES, `a UUID is ${UUID_BYTES} bytes, got ${bytes.length}`);
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.length).toString('base64url');
}
