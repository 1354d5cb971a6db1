/**
 * Byte copies that are really copies. `Buffer#slice` returns a view, so `body.slice()` on a
 * Buffer passed as a Uint8Array would silently share memory; these go through Uint8Array's own
 * methods and always return a plain Uint8Array.
 */
export function copyBytes(bytes: Uint8Array, start = 0, end = bytes.length): Uint8Array {
  const copy = new Uint8Array(end - start);
  copy.set(bytes.subarray(start, end));
  return copy;
}

/** The parts laid end to end in one new buffer. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let total = 0;
  for (const part of parts) total += part.length;
  const out = new Uint8Array(total);
  let at = 0;
  for (const part of parts) {
    out.set(part, at);
    at += part.length;
  }
  return out;
}

/** Whether `a` and `b` hold the same bytes. */
export function bytesEqual(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}
