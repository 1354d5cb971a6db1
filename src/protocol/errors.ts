/**
 * A request that cannot be decoded: a length that runs past the frame, a count above its limit,
 * an unknown API. The connection answers what it can (Kafka closes the connection on most of
 * these) and never crashes the broker.
 */
export class ProtocolError extends Error {
  override name = 'ProtocolError';
  /** Byte position in the request where decoding failed. */
  readonly position: number;

  constructor(message: string, position: number) {
    super(`${message} (at byte ${position})`);
    this.position = position;
  }
}
