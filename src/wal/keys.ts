import { FerryError } from '../errors.ts';

/** Zero-padding keeps keys of one stream in numeric order for backends that do sort. */
const EPOCH_DIGITS = 10;
const SEQUENCE_DIGITS = 20;
/** Writer ids become one key segment: no '/', nothing a URL or a file name would trip on. */
const WRITER_ID_PATTERN = /^[A-Za-z0-9._-]{1,128}$/;

export interface StreamId {
  readonly writerId: string;
  readonly epoch: number;
}

/** Whether two ids name one stream: the same writer in the same epoch. */
export function sameStream(a: StreamId, b: StreamId): boolean {
  return a.writerId === b.writerId && a.epoch === b.epoch;
}

export function validateWriterId(writerId: string): void {
  if (!WRITER_ID_PATTERN.test(writerId)) {
    throw new FerryError('InvalidArgument', `writer id ${JSON.stringify(writerId)} must be 1 to 128 of A-Z a-z 0-9 . _ -`);
  }
}

/** `<prefix>/wal/<writerId>/<epoch>/`: every object of one stream (docs/wal-protocol.md). */
export function streamPrefix(prefix: string, stream: StreamId): string {
  return `${walRoot(prefix)}${stream.writerId}/${String(stream.epoch).padStart(EPOCH_DIGITS, '0')}/`;
}

export function walObjectKey(prefix: string, stream: StreamId, sequence: number): string {
  return streamPrefix(prefix, stream) + String(sequence).padStart(SEQUENCE_DIGITS, '0');
}

export function walRoot(prefix: string): string {
  return prefix === '' ? 'wal/' : `${prefix.replace(/\/+$/, '')}/wal/`;
}

/** The stream and sequence of a WAL object key, or null if the key is not one. */
export function parseWalObjectKey(prefix: string, key: string): { stream: StreamId; sequence: number } | null {
  const root = walRoot(prefix);
  if (!key.startsWith(root)) return null;
  const match = /^([A-Za-z0-9._-]{1,128})\/(\d{10})\/(\d{20})$/.exec(key.slice(root.length));
  if (match === null) return null;
  return { stream: { writerId: match[1]!, epoch: Number(match[2]) }, sequence: Number(match[3]) };
}

/** A floor mark's key segment (docs/tier-protocol.md [G4]): `floor-<sequence>`, beside the stream's objects. */
export const FLOOR_MARK_SEGMENT = 'floor-';

/** `<stream prefix>floor-<sequence:20>`: WAL GC deleted (or is deleting) every object of the stream below `floor`. */
export function floorMarkKey(prefix: string, stream: StreamId, floor: number): string {
  return `${floorMarksPrefix(prefix, stream)}${String(floor).padStart(SEQUENCE_DIGITS, '0')}`;
}

export function floorMarksPrefix(prefix: string, stream: StreamId): string {
  return streamPrefix(prefix, stream) + FLOOR_MARK_SEGMENT;
}

/** The floor a floor mark's key names, or null if the key is not one. */
export function parseFloorMarkKey(prefix: string, key: string): { stream: StreamId; floor: number } | null {
  const root = walRoot(prefix);
  if (!key.startsWith(root)) return null;
  const match = /^([A-Za-z0-9._-]{1,128})\/(\d{10})\/floor-(\d{20})$/.exec(key.slice(root.length));
  if (match === null) return null;
  return { stream: { writerId: match[1]!, epoch: Number(match[2]) }, floor: Number(match[3]) };
}
