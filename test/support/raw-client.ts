/** A raw Kafka client for protocol tests: sends frames, collects size-prefixed responses, notices the close. */
export interface RawClient {
  send(frame: Uint8Array): void;
  sendRaw(bytes: Uint8Array): void;
  readonly responses: Uint8Array[];
  readonly closed: boolean;
  end(): void;
}

export async function rawClient(port: number): Promise<RawClient> {
  const responses: Uint8Array[] = [];
  let buffer = new Uint8Array(0);
  let closed = false;
  const socket = await Bun.connect({
    hostname: '127.0.0.1',
    port,
    socket: {
      data(_socket, chunk) {
        const joined = new Uint8Array(buffer.length + chunk.length);
        joined.set(buffer);
        joined.set(chunk, buffer.length);
        buffer = joined;
        while (buffer.length >= 4) {
          const size = new DataView(buffer.buffer, buffer.byteOffset).getInt32(0);
          if (buffer.length < 4 + size) break;
          responses.push(buffer.slice(4, 4 + size));
          buffer = buffer.slice(4 + size);
        }
      },
      close() {
        closed = true;
      },
    },
  });
  return {
    send(frame: Uint8Array) {
      const prefix = new Uint8Array(4);
      new DataView(prefix.buffer).setInt32(0, frame.length);
      socket.write(prefix);
      socket.write(frame);
    },
    sendRaw(bytes: Uint8Array) {
      socket.write(bytes);
    },
    responses,
    get closed() {
      return closed;
    },
    end: () => socket.end(),
  };
}
