// Review of issue 27 (cd64854, low severity): positionOf reads into one process-wide skip window
// (src/log/log-read.ts) that grows to the largest window ever asked for and is never given up. The
// window is max(8 KiB, index.interval.bytes + 27) clamped to the segment's end, and a topic may set
// index.interval.bytes up to 2^31 - 1: one read of such a topic (a Fetch, a ListOffsets, a
// producer-state replay) far into a large segment leaves that many bytes pinned in the process
// until it exits. Before cd64854 the window was a fresh buffer per read, collected afterwards.
// This test reads once from the end of a 32 MiB segment of a log whose index interval exceeds it,
// then reads another log, and checks that read does not go through a segment-sized window kept from
// the first. It fails on dd22f7c. (Its first form waited for the large buffer to be collected, which
// JavaScriptCore's conservative scan made flaky in the full suite.)
import { afterEach, expect, test } from 'bun:test';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { type Disk, systemDisk } from '../../src/util/disk.ts';
import { batchOf } from '../support/batches.ts';

const INDEX_INTERVAL_BYTES = 256 * 1024 * 1024;
const BATCHES = 512;
const VALUE_BYTES = 64 * 1024;
/** A read buffer at least this large is a skip window over most of the segment, not a record read. */
const LARGE_READ_BYTES = 16 * 1024 * 1024;

const directories: string[] = [];
afterEach(() => {
  for (const directory of directories.splice(0)) rmSync(directory, { recursive: true, force: true });
});

/** The system disk, noting (weakly) every large buffer a read fills. */
function watchedDisk(large: WeakRef<ArrayBufferLike>[]): Disk {
  return {
    ...systemDisk,
    readSync: (fd, into, offset, length, position) => {
      if (into.buffer.byteLength >= LARGE_READ_BYTES) large.push(new WeakRef(into.buffer));
      return systemDisk.readSync(fd, into, offset, length, position);
    },
  } as Disk;
}

function readOnce(directory: string, large: WeakRef<ArrayBufferLike>[]): number {
  const log = PartitionLog.open(directory, { config: { indexIntervalBytes: INDEX_INTERVAL_BYTES, flush: { kind: 'none' } }, disk: watchedDisk(large) });
  try {
    for (let index = 0; index < BATCHES; index++) log.append(batchOf(`b${index}`, 1, 1_700_000_000_000, VALUE_BYTES), 0);
    const last = log.logEndOffset - 1;
    const { batches } = log.read(last, 1024);
    expect(batches[0]!.baseOffset).toBe(last);
    return batches.length;
  } finally {
    log.close();
  }
}

test("a read's skip window over a large segment is not kept for the process's later reads", () => {
  const directory = mkdtempSync(join(tmpdir(), 'ferry-skip-window-'));
  directories.push(directory);
  const large: WeakRef<ArrayBufferLike>[] = [];
  expect(readOnce(directory, large)).toBe(1);
  expect(large.length).toBeGreaterThan(0); // the read did walk the segment through a large window
  // A later read of another log (Kafka's default index interval) skips through the shared window:
  // had the large one been kept there, it would read into that segment-sized buffer. (Deterministic,
  // unlike waiting for a collection: JavaScriptCore's conservative scan may keep any buffer a while.)
  const other = mkdtempSync(join(tmpdir(), 'ferry-skip-window-'));
  directories.push(other);
  const readInto: number[] = [];
  const log = PartitionLog.open(other, {
    config: { flush: { kind: 'none' } },
    disk: { ...systemDisk, readSync: (fd, into, offset, length, position) => (readInto.push(into.buffer.byteLength), systemDisk.readSync(fd, into, offset, length, position)) } as Disk,
  });
  try {
    for (let index = 0; index < 64; index++) log.append(batchOf(`c${index}`, 1, 1_700_000_000_000, 1024), 0);
    expect(log.read(40, 1024).batches[0]!.baseOffset).toBe(40);
  } finally {
    log.close();
  }
  expect(readInto.length).toBeGreaterThan(0);
  expect(Math.max(...readInto)).toBeLessThan(LARGE_READ_BYTES);
});
