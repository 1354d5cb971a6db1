// Shared by the HTTP examples: GET /records/<offset> answers one record of partition 0 of a topic.
import { type Ferry, isFerryError } from 'ferry';

/** The path a record is read at: /records/<offset>. */
export const RECORD_PATH = /^\/records\/(\d+)$/;

/**
 * The record at `offset` of `topic`-0 as its bytes (200), or 404 while it is not committed (at or
 * past the high watermark: a read replica may not have it yet) or the topic is unknown here.
 */
export async function readRecord(ferry: Ferry, topic: string, offset: number): Promise<Response> {
  try {
    const { highWatermark, logStartOffset } = ferry.fetch(topic, 0, offset);
    if (offset < logStartOffset || offset >= highWatermark) return notFound(`offset ${offset} is outside [${logStartOffset}, ${highWatermark})`);
  } catch (error) {
    if (isFerryError(error, 'UnknownTopicOrPartition') || isFerryError(error, 'OffsetOutOfRange')) return notFound(error.message);
    throw error;
  }
  // Below the high watermark the first record consumed is there already: no waiting.
  for await (const record of ferry.consume(topic, { partition: 0, fromOffset: offset })) {
    return new Response(record.value ?? new Uint8Array(0), { headers: { 'x-offset': String(record.offset) } });
  }
  return notFound(`offset ${offset} is gone`);
}

function notFound(reason: string): Response {
  return new Response(`${reason}\n`, { status: 404 });
}
