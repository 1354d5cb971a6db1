/**
 * Router.errorAnswer: the answer to a request the broker will not handle (one sent in the middle of
 * a SASL exchange) names every topic and partition the request named with the error, as Kafka's
 * request.getErrorResponse does, so that a client reports the error instead of a missing entry
 * (sim seeds 100004 and 100008: DeleteTopics v0-5 names its topics as bare strings).
 */
import { describe, expect, test } from 'bun:test';
import { type ApiCodec, isFlexible } from '../../../src/broker/apis/api.ts';
import { deleteTopicsCodec } from '../../../src/broker/apis/delete-topics.ts';
import { listOffsetsCodec } from '../../../src/broker/apis/list-offsets.ts';
import { metadataCodec } from '../../../src/broker/apis/metadata.ts';
import { produceCodec } from '../../../src/broker/apis/produce.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { KafkaWriter } from '../../../src/protocol/writer.ts';
import { Router } from '../../../src/broker/router.ts';
import type { Message } from '../../support/kafka-message-schema.ts';
import { grammarRequestBytes, grammarResponse } from '../../support/codec-harness.ts';

const CORRELATION_ID = 77;
const TOPICS = ['orders', 'payments'];
const ERROR = ErrorCode.ILLEGAL_SASL_STATE;

// biome-ignore lint: codecs of different request and response types
type AnyCodec = ApiCodec<any, any>;

const router = new Router(
  [deleteTopicsCodec, produceCodec, metadataCodec, listOffsetsCodec].map((codec: AnyCodec) => ({
    codec,
    handle: () => {
      throw new Error('errorAnswer never calls the handler');
    },
  })),
);

/** A request frame (header v1 or v2, then the body as Kafka's grammar writes it). */
function frameOf(codec: AnyCodec, version: number, body: Message): Uint8Array {
  const writer = new KafkaWriter();
  writer.int16(codec.key);
  writer.int16(version);
  writer.int32(CORRELATION_ID);
  writer.nullableString('error-answer-test');
  if (isFlexible(codec, version)) writer.int8(0); // no tagged fields
  return Buffer.concat([...writer.chunks(), grammarRequestBytes(codec, version, body)]);
}

/** The response body of an answer, read by Kafka's grammar, after its header (v0, or v1 with its tag buffer). */
function answerOf(codec: AnyCodec, version: number, chunks: Uint8Array[]): Message {
  const bytes = Buffer.concat(chunks);
  expect(bytes.readInt32BE(0)).toBe(CORRELATION_ID);
  const flexible = isFlexible(codec, version);
  return grammarResponse(codec, version, Uint8Array.from(bytes.subarray(flexible ? 5 : 4)));
}

function versions(codec: AnyCodec): number[] {
  return Array.from({ length: codec.maxVersion - codec.minVersion + 1 }, (_, index) => codec.minVersion + index);
}

describe('each topic a request names is answered with the error', () => {
  test('DeleteTopics, every version (v0-5 name topics as bare strings, v6 as entries)', () => {
    for (const version of versions(deleteTopicsCodec)) {
      const body = version < 6 ? { topicNames: TOPICS, timeoutMs: 1000 } : { topics: TOPICS.map((name) => ({ name })), timeoutMs: 1000 };
      const answer = answerOf(deleteTopicsCodec, version, router.errorAnswer(frameOf(deleteTopicsCodec, version, body), ERROR));
      expect(answer.responses.map((entry: Message) => [entry.name, entry.errorCode])).toEqual(TOPICS.map((name) => [name, ERROR]));
    }
  });

  test('Produce, every version: each partition', () => {
    for (const version of versions(produceCodec)) {
      const body = {
        acks: -1,
        timeoutMs: 1000,
        topicData: TOPICS.map((name) => ({
          name,
          partitionData: [
            { index: 0, records: null },
            { index: 3, records: null },
          ],
        })),
      };
      const answer = answerOf(produceCodec, version, router.errorAnswer(frameOf(produceCodec, version, body), ERROR));
      expect(answer.responses.map((entry: Message) => [entry.name, entry.partitionResponses.map((partition: Message) => [partition.index, partition.errorCode])])).toEqual(
        TOPICS.map((name) => [
          name,
          [
            [0, ERROR],
            [3, ERROR],
          ],
        ]),
      );
    }
  });

  test('Metadata and ListOffsets, every version', () => {
    for (const version of versions(metadataCodec)) {
      const answer = answerOf(metadataCodec, version, router.errorAnswer(frameOf(metadataCodec, version, { topics: TOPICS.map((name) => ({ name })) }), ERROR));
      expect(answer.topics.map((entry: Message) => [entry.name, entry.errorCode])).toEqual(TOPICS.map((name) => [name, ERROR]));
      expect(answer.brokers).toEqual([]);
    }
    for (const version of versions(listOffsetsCodec)) {
      const body = { replicaId: -1, topics: TOPICS.map((name) => ({ name, partitions: [{ partitionIndex: 1, timestamp: -2 }] })) };
      const answer = answerOf(listOffsetsCodec, version, router.errorAnswer(frameOf(listOffsetsCodec, version, body), ERROR));
      expect(answer.topics.map((entry: Message) => [entry.name, entry.partitions.map((partition: Message) => [partition.partitionIndex, partition.errorCode])])).toEqual(
        TOPICS.map((name) => [name, [[1, ERROR]]]),
      );
    }
  });
});
