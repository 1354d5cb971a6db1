/**
 * A WAL object (docs/wal-format.md) checked part by part: header, footer index and every frame,
 * each XXH64 reported ok or BAD, and each frame's record batches CRC-checked. Unlike the
 * follower's reader, which refuses a whole object at its first fault, this goes on after one, so
 * a damaged object shows every part that is damaged.
 */
import { isFerryError } from '../../errors.ts';
import { decodeFooter, decodeFrame, decodeHeader, decodeTrailer, TRAILER_BYTES, type WalFrameEntry, type WalHeader } from '../../wal/format.ts';
import { scanSegment } from './segment.ts';

export type Check = 'ok' | 'BAD';

export interface FrameReport {
  readonly topic: string;
  readonly topicId: string;
  readonly partition: number;
  readonly leaderEpoch: number;
  readonly baseOffset: number;
  readonly lastOffset: number;
  readonly position: number;
  readonly bytes: number;
  /** XXH64 of the frame's data, and its header agreeing with the footer entry. */
  readonly checksum: Check;
  readonly batches: number;
  /** Every batch's CRC32C (unchecked, 'BAD', when the checksum already failed). */
  readonly crc: Check;
  readonly problem: string | null;
}

export interface WalObjectReport {
  readonly kind: 'wal-object';
  readonly path: string;
  readonly bytes: number;
  /** Bytes before the WAL object in the file: the file store's object header, or 0 for a bare object. */
  readonly offset: number;
  readonly header: (WalHeader & { readonly checksum: Check }) | { readonly checksum: Check; readonly problem: string };
  readonly footer: { readonly checksum: Check; readonly problem: string | null };
  readonly frames: readonly FrameReport[];
  readonly ok: boolean;
}

/** Inspects the WAL object `bytes` (the object itself, without any file store header). */
export function inspectWalObject(path: string, bytes: Uint8Array, offset: number): WalObjectReport {
  const header = headerOf(bytes);
  const { entries, footer } = footerOf(bytes);
  const frames = entries.map((entry) => frameOf(bytes, entry));
  const ok = header.checksum === 'ok' && footer.checksum === 'ok' && frames.every((frame) => frame.checksum === 'ok' && frame.crc === 'ok');
  return { kind: 'wal-object', path, bytes: bytes.length, offset, header, footer, frames, ok };
}

function headerOf(bytes: Uint8Array): WalObjectReport['header'] {
  try {
    const { headerBytes: _, ...header } = decodeHeader(bytes);
    return { ...header, checksum: 'ok' };
  } catch (error) {
    if (!isFerryError(error)) throw error;
    return { checksum: 'BAD', problem: error.message };
  }
}

function footerOf(bytes: Uint8Array): { entries: WalFrameEntry[]; footer: WalObjectReport['footer'] } {
  try {
    const trailer = decodeTrailer(bytes.subarray(Math.max(0, bytes.length - TRAILER_BYTES)), bytes.length);
    const footerBytes = bytes.subarray(trailer.footerPosition, trailer.footerPosition + trailer.footerLength);
    return { entries: decodeFooter(footerBytes, trailer.footerPosition, trailer.footerChecksum), footer: { checksum: 'ok', problem: null } };
  } catch (error) {
    if (!isFerryError(error)) throw error;
    return { entries: [], footer: { checksum: 'BAD', problem: `${error.message} (the frames cannot be located without it)` } };
  }
}

function frameOf(bytes: Uint8Array, entry: WalFrameEntry): FrameReport {
  const fields = {
    topic: entry.topic,
    topicId: entry.topicId,
    partition: entry.partition,
    leaderEpoch: entry.leaderEpoch,
    baseOffset: entry.baseOffset,
    lastOffset: entry.lastOffset,
    position: entry.framePosition,
    bytes: entry.byteLength,
  };
  let data: Uint8Array;
  try {
    data = decodeFrame(bytes.subarray(entry.framePosition, entry.framePosition + entry.frameHeaderBytes + entry.byteLength), entry);
  } catch (error) {
    if (!isFerryError(error)) throw error;
    return { ...fields, checksum: 'BAD', batches: 0, crc: 'BAD', problem: error.message };
  }
  const scan = scanSegment('', data);
  return { ...fields, checksum: 'ok', batches: scan.batches.length, crc: scan.problem === null ? 'ok' : 'BAD', problem: scan.problem };
}

export function walObjectLines(report: WalObjectReport): string[] {
  const where = report.offset === 0 ? '' : ` (after the file store's ${report.offset}-byte object header)`;
  const lines = [`WAL object ${report.path}: ${report.bytes} bytes${where}`];
  const header = report.header;
  lines.push(
    'problem' in header
      ? `  header: checksum BAD: ${header.problem}`
      : `  header: ${header.kind} writer=${header.writerId} epoch=${header.epoch} sequence=${header.sequence} created=${new Date(header.createdMs).toISOString()} checksum ok`,
  );
  lines.push(`  footer: ${report.frames.length} frames, checksum ${report.footer.checksum}${report.footer.problem === null ? '' : `: ${report.footer.problem}`}`);
  for (const frame of report.frames) {
    const problem = frame.problem === null ? '' : `: ${frame.problem}`;
    lines.push(
      `  frame ${frame.topic}-${frame.partition} (topic id ${frame.topicId}) offsets ${frame.baseOffset}..${frame.lastOffset} epoch=${frame.leaderEpoch} bytes=${frame.bytes} position=${frame.position} batches=${frame.batches} checksum ${frame.checksum}${frame.checksum === 'ok' ? ` crc ${frame.crc}` : ''}${problem}`,
    );
  }
  lines.push(report.ok ? '  all checksums ok' : '  BAD: the object is damaged; a follower would refuse it');
  return lines;
}
