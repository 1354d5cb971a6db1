// (From the review of issue 12.) codec edges schema-codecs.test.ts does not reach: unknown tags
// inside nested structs (Kafka skips them), a tagged field declaring more bytes than remain,
// uvarint lengths at and past 5 bytes, int64 extremes, strings at 32767 bytes. Held when written.
import { expect, test } from 'bun:test';
import { metadataCodec } from '../../src/broker/apis/metadata.ts';
import { listOffsetsCodec } from '../../src/broker/apis/list-offsets.ts';
import { ProtocolError } from '../../src/protocol/errors.ts';
import { KafkaReader, STRING_BYTES_MAX } from '../../src/protocol/reader.ts';
import { KafkaWriter } from '../../src/protocol/writer.ts';

const bytesOf = (writer: KafkaWriter) => Buffer.concat(writer.chunks());

/** Metadata v9 (flexible, names only): one topic, with `topicTags` written into its tagged section. */
function metadataV9(name: string, topicTags: (w: KafkaWriter) => void): Uint8Array {
  const nameBytes = new TextEncoder().encode(name); // raw: the writer refuses a string past 32767 bytes, which this test sends
  const writer = new KafkaWriter()
    .uvarint(2)
    .uvarint(nameBytes.length + 1)
    .raw(nameBytes);
  topicTags(writer);
  writer.int8(1).int8(0).int8(0).uvarint(0); // allowAutoTopicCreation, includeCluster- and includeTopicAuthorizedOperations
  return bytesOf(writer);
}

test('an unknown tag inside a nested struct is skipped, as Kafka does', () => {
  const bytes = metadataV9('a', (w) =>
    w
      .uvarint(1)
      .uvarint(7)
      .uvarint(3)
      .raw(Uint8Array.of(1, 2, 3)),
  );
  const reader = new KafkaReader(bytes);
  const decoded = metadataCodec.decodeRequest(reader, 9);
  expect(decoded.topics![0]!.name).toBe('a');
  expect(decoded.allowAutoTopicCreation).toBe(true);
  expect(reader.remaining).toBe(0);
});

test('a nested tagged field declaring more bytes than remain, or a 6-byte uvarint, is a ProtocolError', () => {
  expect(() => metadataCodec.decodeRequest(new KafkaReader(metadataV9('a', (w) => w.uvarint(1).uvarint(7).uvarint(1000).raw(Uint8Array.of(1)))), 9)).toThrow(ProtocolError);
  const sixBytes = Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0xff, 0x01, 0, 0, 0);
  expect(() => metadataCodec.decodeRequest(new KafkaReader(sixBytes), 9)).toThrow(ProtocolError);
  // A 5-byte uvarint of 2^35 - 1 as an array length: refused before allocating.
  const huge = Uint8Array.of(0xff, 0xff, 0xff, 0xff, 0x7f, 0, 0);
  expect(() => metadataCodec.decodeRequest(new KafkaReader(huge), 9)).toThrow(ProtocolError);
});

test('a topic name of exactly 32767 bytes decodes; 32768 is a ProtocolError', () => {
  for (const [length, ok] of [
    [STRING_BYTES_MAX, true],
    [STRING_BYTES_MAX + 1, false],
  ] as const) {
    const bytes = metadataV9('n'.repeat(length), (w) => w.uvarint(0));
    const decode = () => metadataCodec.decodeRequest(new KafkaReader(bytes), 9);
    if (ok) expect(decode().topics![0]!.name?.length).toBe(length);
    else expect(decode).toThrow(ProtocolError);
  }
});

test('int64 extremes: Long.MAX_VALUE as a ListOffsets timestamp is a ProtocolError, never a lost precision', () => {
  // ListOffsets v1: replicaId, topics [name, partitions [partitionIndex, timestamp]]
  const writer = new KafkaWriter().int32(-1).int32(1).string('t').int32(1).int32(0);
  writer.int32(0x7fffffff).int32(-1); // 2^63 - 1
  expect(() => listOffsetsCodec.decodeRequest(new KafkaReader(bytesOf(writer)), 1)).toThrow(ProtocolError);
  const min = new KafkaWriter().int32(-1).int32(1).string('t').int32(1).int32(0).int32(-0x80000000).int32(0);
  expect(() => listOffsetsCodec.decodeRequest(new KafkaReader(bytesOf(min)), 1)).toThrow(ProtocolError);
});
