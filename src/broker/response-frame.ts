/**
 * A response as the socket gets it: its int32 size prefix, then its chunks (the KafkaWriter's:
 * encoded fields, with large record-batch views between them). Small chunks are copied together
 * into one buffer with their neighbours, so a response of small fields is one write; a large
 * chunk goes out as the view it is, so the record batches a Fetch read from a segment reach the
 * socket without another copy. Bun's sockets have no writev: each part is its own write.
 */
import { stageTimers } from '../metrics/stage-timers.ts';
import { assert } from '../util/assert.ts';

const SIZE_PREFIX_BYTES = 4;
/**
 * Chunks smaller than this are copied into a part with their neighbours; larger ones are written
 * as they are. A copy of 16 KiB costs about what one more send(2) does (a few microseconds), so
 * below it copying is cheaper than a write of its own, above it a write of its own is.
 */
export const COPY_BELOW_BYTES = 16 * 1024;

/** The size prefix and `chunks`, as the parts to write in order; every part is non-empty. */
export function responseParts(chunks: readonly Uint8Array[]): Uint8Array[] {
  let size = 0;
  for (const chunk of chunks) size += chunk.length;
  const parts: Uint8Array[] = [];
  let run: Uint8Array[] = [sizePrefix(size)];
  let runBytes = SIZE_PREFIX_BYTES;
  for (const chunk of chunks) {
    if (chunk.length < COPY_BELOW_BYTES) {
      run.push(chunk);
      runBytes += chunk.length;
      continue;
    }
    if (runBytes > 0) parts.push(joined(run, runBytes));
    parts.push(chunk);
    run = [];
    runBytes = 0;
  }
  if (runBytes > 0) parts.push(joined(run, runBytes));
  return parts;
}

function sizePrefix(size: number): Uint8Array {
  assert(size >= 0 && size <= 0x7fff_ffff, `a response of ${size} bytes does not fit its int32 size`);
  return Uint8Array.of(size >>> 24, (size >>> 16) & 0xff, (size >>> 8) & 0xff, size & 0xff);
}

/** `run` laid end to end: the one chunk itself, or a copy into a buffer every byte of which is written (no zero fill). */
function joined(run: readonly Uint8Array[], bytes: number): Uint8Array {
  if (run.length === 1) return run[0]!;
  stageTimers.copied('response-body', bytes);
  const out = Buffer.allocUnsafe(bytes);
  let at = 0;
  for (const chunk of run) {
    out.set(chunk, at);
    at += chunk.length;
  }
  return out;
}
