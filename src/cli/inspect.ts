import { existsSync, readFileSync, statSync } from 'node:fs';
import { extname } from 'node:path';
import { isFerryError } from '../errors.ts';
import { parseBatchAt } from '../format/index.ts';
import { isStoreError } from '../store/errors.ts';
import { decodeHeader as decodeFileObjectHeader, OBJECT_HEADER_BYTES } from '../store/file-object.ts';
import { WAL_MAGIC } from '../wal/format.ts';
import { CliError, parseCommandArgs } from './args.ts';
import { dataDirectoryLines, inspectDataDirectory, isDataDirectory } from './inspect/data-dir.ts';
import { holdsSegments, inspectPartition, partitionLines } from './inspect/partition.ts';
import { scanSegment, segmentLines } from './inspect/segment.ts';
import { inspectWalObject, walObjectLines } from './inspect/wal-object.ts';

const USAGE = `usage: ferry inspect [options] PATH

Reads Ferry's files without changing them (a running broker's too) and says what is in them:
  a data directory       (a broker's --data, topics.json and <topic>-<partition> directories): one line
                         per partition: segments, offsets, batches, bytes, leader epochs, producer
                         snapshots, and the WAL objects the default file store holds under it
  a partition directory  (<topic>-<partition>): each segment's offsets, batches and bytes
  a segment file         (<base offset>.log): each record batch: offsets, record count, size, leader
                         epoch, compression, timestamps, producer, and its CRC32C checked
  a WAL object           (a file store's .o file under objects/…/wal.d/, or an object downloaded from
                         S3): its header, footer and frames (partition, offsets, bytes), every XXH64
                         checksum checked (ok or BAD) and each frame's batch CRCs
A damaged part (a bad CRC or checksum, a torn tail) is reported and the exit code is 1; a path that
is none of these exits with 2.

options:
  --batches      for a partition directory, list every batch of every segment too
  --records      for a segment, print every record's offset, key and value too
  --json         print the report as JSON instead
  -h, --help     this text`;

/** Bytes of a record's key or value --records shows. */
const RECORD_PREVIEW_BYTES = 80;
const EXIT_DAMAGED = 1;

export async function runInspect(args: string[]): Promise<void> {
  const parsed = parseCommandArgs(args, { records: { type: 'boolean' }, batches: { type: 'boolean' }, json: { type: 'boolean' } }, USAGE);
  if (parsed === null) return;
  const [target, ...extra] = parsed.positionals;
  if (target === undefined) throw new CliError("say what to inspect: ferry inspect PATH (a data directory, partition directory, segment or WAL object; 'ferry inspect --help')");
  if (extra.length > 0) throw new CliError(`one PATH at a time, got also '${extra[0]}'`);
  if (!existsSync(target)) throw new CliError(`${target} does not exist; give a data directory, partition directory, segment file or WAL object`);
  const json = parsed.values.json === true;
  const report = inspect(target, { records: parsed.values.records === true && !json, batches: parsed.values.batches === true });
  console.log(json ? JSON.stringify(report.value, jsonValue, 2) : report.lines.join('\n'));
  if (!report.ok) process.exitCode = EXIT_DAMAGED;
}

interface Inspected {
  readonly value: unknown;
  readonly lines: readonly string[];
  readonly ok: boolean;
}

function inspect(path: string, options: { records: boolean; batches: boolean }): Inspected {
  const stat = statSync(path);
  if (stat.isDirectory()) {
    if (isDataDirectory(path)) {
      const report = inspectDataDirectory(path);
      return { value: report, lines: dataDirectoryLines(report), ok: report.ok };
    }
    if (holdsSegments(path)) {
      const report = inspectPartition(path);
      return { value: report, lines: partitionLines(report, options.batches), ok: report.ok };
    }
    throw new CliError(`${path} is neither a data directory (topics.json, <topic>-<partition> directories) nor a partition directory (.log segments); give one of those, a segment or a WAL object`);
  }
  // A FIFO, socket or device would block the read or never end: only regular files are read.
  if (!stat.isFile()) throw new CliError(`${path} is not a regular file (a pipe, socket or device); give a data directory, a partition directory, a segment or a WAL object`);
  return inspectFile(path, readFileSync(path), options.records);
}

function inspectFile(path: string, bytes: Uint8Array, withRecords: boolean): Inspected {
  const offset = isFileStoreObject(path, bytes) ? OBJECT_HEADER_BYTES : 0;
  const content = bytes.subarray(offset);
  if (startsWithWalMagic(content)) {
    const report = inspectWalObject(path, content, offset);
    return { value: report, lines: walObjectLines(report), ok: report.ok };
  }
  if (offset > 0) throw new CliError(`${path} is a file store object but not a WAL object (a control record or a tiered segment, say); inspect takes WAL objects, segments and directories`);
  if (extname(path) !== '.log' && !startsWithBatch(bytes))
    throw new CliError(`${path} is neither a segment (.log, record batches) nor a WAL object; give one of those, a partition directory or a data directory`);
  const records: string[] = [];
  const report = scanSegment(
    path,
    bytes,
    withRecords
      ? (batch) => {
          for (const record of batch.records()) records.push(`    ${record.offset} key=${preview(record.key)} value=${preview(record.value)}`);
        }
      : undefined,
  );
  const lines = segmentLines(report);
  // Records follow the batch lines, before the closing line.
  return { value: report, lines: [...lines.slice(0, -1), ...records, lines.at(-1)!], ok: report.problem === null };
}

function isFileStoreObject(path: string, bytes: Uint8Array): boolean {
  if (bytes.length < OBJECT_HEADER_BYTES) return false;
  try {
    decodeFileObjectHeader(bytes.subarray(0, OBJECT_HEADER_BYTES), path);
    return true;
  } catch (error) {
    if (isStoreError(error)) return false;
    throw error;
  }
}

function startsWithWalMagic(bytes: Uint8Array): boolean {
  return bytes.length >= 4 && new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0) === WAL_MAGIC;
}

/** A file named otherwise is taken for a segment if its first bytes are a valid record batch. */
function startsWithBatch(bytes: Uint8Array): boolean {
  try {
    return parseBatchAt(bytes, 0, bytes.length) !== null;
  } catch (error) {
    if (isFerryError(error)) return false;
    throw error;
  }
}

function preview(bytes: Uint8Array | null): string {
  return bytes === null ? 'null' : JSON.stringify(new TextDecoder().decode(bytes.subarray(0, RECORD_PREVIEW_BYTES)));
}

/** JSON.stringify's replacer: bigints (none expected) as text rather than a throw. */
function jsonValue(_key: string, value: unknown): unknown {
  return typeof value === 'bigint' ? value.toString() : value;
}
