/**
 * The topics a consumer subscribes to, from its JoinGroup protocol metadata: Kafka's
 * ConsumerProtocolSubscription (version int16, then topics as an array of int16-length strings,
 * then fields later versions added: user data, owned partitions, generation, rack). Every version
 * starts with the same topics array and is not flexible, so a version newer than any known is
 * read the same way (Kafka reads it as its highest). Null when the bytes are not such a
 * subscription (a negative version, a truncated or negative length): its topics are unknown.
 */
export function subscribedTopics(metadata: Uint8Array): string[] | null {
  const view = new DataView(metadata.buffer, metadata.byteOffset, metadata.byteLength);
  if (view.byteLength < VERSION_BYTES + COUNT_BYTES || view.getInt16(0) < 0) return null;
  const count = view.getInt32(VERSION_BYTES);
  if (count < 0) return null;
  const topics: string[] = [];
  let at = VERSION_BYTES + COUNT_BYTES;
  for (let i = 0; i < count; i++) {
    if (at + LENGTH_BYTES > view.byteLength) return null;
    const length = view.getInt16(at);
    at += LENGTH_BYTES;
    if (length < 0 || at + length > view.byteLength) return null;
    topics.push(DECODER.decode(metadata.subarray(at, at + length)));
    at += length;
  }
  return topics;
}

const VERSION_BYTES = 2;
const COUNT_BYTES = 4;
const LENGTH_BYTES = 2;
const DECODER = new TextDecoder();
