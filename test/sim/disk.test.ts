import { describe, expect, test } from 'bun:test';
import { Engine } from '../../src/engine/index.ts';
import { isFerryError } from '../../src/errors.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { SimDisk } from '../../src/sim/disk.ts';
import { ManualClock } from '../../src/util/clock.ts';
import { type Disk, diskWithSync, readTextFileSync } from '../../src/util/disk.ts';
import type { FileSync } from '../../src/util/file-sync.ts';
import { writeFileAtomicSync } from '../../src/util/files.ts';
import { isOsError } from '../../src/util/os-error.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { batchOf } from '../support/batches.ts';

const text = (value: string) => new TextEncoder().encode(value);

function disk(seed = 1, capacityBytes?: number): SimDisk {
  return new SimDisk({ random: new SeededRandom(seed), ...(capacityBytes === undefined ? {} : { capacityBytes }) });
}

/** A disk with `/d` created and durable (its name synced into the root). */
function diskWithDirectory(seed = 1, capacityBytes?: number): SimDisk {
  const sim = disk(seed, capacityBytes);
  sim.mkdirSync('/d', { recursive: true });
  sim.syncDirectorySync('/');
  return sim;
}

function writeFile(sim: SimDisk, path: string, value: string): number {
  const fd = sim.openSync(path, 'w');
  sim.writeSync(fd, text(value), 0, value.length, 0);
  return fd;
}

describe('SimDisk: what a crash keeps', () => {
  test('bytes never synced are gone; synced bytes stay', () => {
    const sim = diskWithDirectory();
    const fd = writeFile(sim, '/d/f', 'synced');
    sim.dataSyncSync(fd);
    sim.syncDirectorySync('/d');
    sim.writeSync(fd, text('AAAA'), 0, 4, 6);
    sim.writeSync(fd, text('BBBB'), 0, 4, 10);
    sim.crash();
    const after = readTextFileSync(sim, '/d/f');
    // the first unsynced write is lost; the last may survive as a prefix, over a hole of zeros
    expect(after.slice(0, 6)).toBe('synced');
    expect(after.length === 6 || after.slice(6, 10) === '\0\0\0\0').toBe(true);
    expect('BBBB'.startsWith(after.slice(10))).toBe(true);
  });

  test("a name is durable only once its directory is fsynced, whatever its file's syncs", () => {
    const sim = diskWithDirectory();
    const fd = writeFile(sim, '/d/f', 'x');
    sim.syncSync(fd);
    sim.crash();
    expect(sim.existsSync('/d/f')).toBe(false);
    expect(sim.readdirSync('/d')).toEqual([]);
  });

  test('a directory never fsynced is empty after a crash, though its parent keeps its name', () => {
    const sim = diskWithDirectory();
    sim.mkdirSync('/d/sub', { recursive: true });
    sim.syncDirectorySync('/d');
    const fd = writeFile(sim, '/d/sub/f', 'x');
    sim.syncSync(fd);
    sim.crash();
    expect(sim.existsSync('/d/sub')).toBe(true);
    expect(sim.readdirSync('/d/sub')).toEqual([]);
  });

  test('a rename is undone by a crash until the directory is fsynced', () => {
    const sim = diskWithDirectory();
    writeFileAtomicSync('/d/f', text('old'), sim);
    const fd = writeFile(sim, '/d/f.tmp', 'new');
    sim.syncSync(fd);
    sim.closeSync(fd);
    sim.syncDirectorySync('/d'); // f.tmp's name durable
    sim.renameSync('/d/f.tmp', '/d/f');
    expect(readTextFileSync(sim, '/d/f')).toBe('new');
    sim.crash();
    expect(readTextFileSync(sim, '/d/f')).toBe('old');
    expect(readTextFileSync(sim, '/d/f.tmp')).toBe('new');

    sim.renameSync('/d/f.tmp', '/d/f');
    sim.syncDirectorySync('/d');
    sim.crash();
    expect(readTextFileSync(sim, '/d/f')).toBe('new');
    expect(sim.existsSync('/d/f.tmp')).toBe(false);
  });

  test("an unlink is undone by a crash until the directory is fsynced, with the file's synced bytes", () => {
    const sim = diskWithDirectory();
    writeFileAtomicSync('/d/f', text('kept'), sim);
    sim.unlinkSync('/d/f');
    sim.crash();
    expect(readTextFileSync(sim, '/d/f')).toBe('kept');
  });

  test('a torn last write survives as a prefix of itself, of a length the seed decides', () => {
    const lengths = new Set<number>();
    for (let seed = 1; seed <= 40; seed++) {
      const sim = diskWithDirectory(seed);
      const fd = writeFile(sim, '/d/f', 'head');
      sim.dataSyncSync(fd);
      sim.syncDirectorySync('/d');
      sim.writeSync(fd, text('0123456789'), 0, 10, 4);
      sim.crash();
      const after = readTextFileSync(sim, '/d/f');
      expect(after.startsWith('head')).toBe(true);
      expect('0123456789'.startsWith(after.slice(4))).toBe(true);
      lengths.add(after.length - 4);
    }
    expect(lengths.size).toBeGreaterThan(3); // zero, some, all: not always the same cut
    // and the same seed cuts the same
    const cut = (seed: number) => {
      const sim = diskWithDirectory(seed);
      const fd = writeFile(sim, '/d/f', '');
      sim.syncDirectorySync('/d');
      sim.writeSync(fd, text('0123456789'), 0, 10, 0);
      sim.crash();
      return readTextFileSync(sim, '/d/f');
    };
    expect(cut(7)).toBe(cut(7));
  });

  test('an unsynced truncation is undone by a crash', () => {
    const sim = diskWithDirectory();
    const fd = writeFile(sim, '/d/f', 'abcdef');
    sim.dataSyncSync(fd);
    sim.syncDirectorySync('/d');
    sim.ftruncateSync(fd, 2);
    expect(sim.fstatSync(fd).size).toBe(2);
    sim.crash();
    expect(readTextFileSync(sim, '/d/f')).toBe('abcdef');
  });

  test('a kill that keeps the page cache loses nothing written, but closes every fd', () => {
    const sim = diskWithDirectory();
    const fd = writeFile(sim, '/d/f', 'unsynced');
    sim.crash({ keepPageCache: true });
    expect(readTextFileSync(sim, '/d/f')).toBe('unsynced');
    expect(() => sim.writeSync(fd, text('x'), 0, 1, 0)).toThrow(/EBADF/);
  });

  test('a failed fsync loses what it was to sync: a later fsync does not bring it back', () => {
    const sim = diskWithDirectory();
    const fd = writeFile(sim, '/d/f', 'lost');
    sim.syncDirectorySync('/d');
    sim.failNextSyncs(1);
    expect(() => sim.dataSyncSync(fd)).toThrow(/EIO/);
    expect(readTextFileSync(sim, '/d/f')).toBe('lost'); // still in the page cache
    sim.dataSyncSync(fd);
    sim.crash();
    expect(readTextFileSync(sim, '/d/f')).toBe(''); // the bytes and the length they gave the file
  });

  test('wipe leaves an empty disk', () => {
    const sim = diskWithDirectory();
    writeFileAtomicSync('/d/f', text('x'), sim);
    sim.wipe();
    expect(sim.existsSync('/d')).toBe(false);
    expect(sim.usedBytes).toBe(0);
  });
});

describe('SimDisk: errors as node gives them', () => {
  test('ENOENT, EEXIST, EBADF with code and syscall', () => {
    const sim = diskWithDirectory();
    const failure = (step: () => unknown) => {
      try {
        step();
      } catch (error) {
        expect(isOsError(error)).toBe(true);
        return (error as { code: string }).code;
      }
      throw new Error('did not fail');
    };
    expect(failure(() => sim.readFileSync('/d/missing'))).toBe('ENOENT');
    expect(failure(() => sim.openSync('/nowhere/f', 'w'))).toBe('ENOENT');
    sim.closeSync(sim.openSync('/d/f', 'wx+'));
    expect(failure(() => sim.openSync('/d/f', 'wx+'))).toBe('EEXIST');
    expect(failure(() => sim.closeSync(999))).toBe('EBADF');
    expect(failure(() => sim.writeSync(sim.openSync('/d/f', 'r'), text('x'), 0, 1, 0))).toBe('EBADF');
  });

  test('mkdir -p says which directory it created first', () => {
    const sim = disk();
    expect(sim.mkdirSync('/a/b/c', { recursive: true })).toBe('/a');
    expect(sim.mkdirSync('/a/b/c', { recursive: true })).toBeUndefined();
    expect(sim.mkdirSync('/a/b/d/e', { recursive: true })).toBe('/a/b/d');
  });
});

describe('SimDisk: capacity', () => {
  test('a write past the capacity fails with ENOSPC and writes nothing; raising the capacity frees it', () => {
    const sim = diskWithDirectory(1, 100);
    const fd = sim.openSync('/d/f', 'w');
    expect(sim.writeSync(fd, new Uint8Array(80), 0, 80, 0)).toBe(80);
    expect(() => sim.writeSync(fd, new Uint8Array(30), 0, 30, 80)).toThrow(expect.objectContaining({ code: 'ENOSPC', syscall: 'write' }));
    expect(sim.fstatSync(fd).size).toBe(80);
    expect(sim.writeSync(fd, new Uint8Array(30), 0, 30, 0)).toBe(30); // an overwrite takes no room
    sim.setCapacity(200);
    expect(sim.writeSync(fd, new Uint8Array(30), 0, 30, 80)).toBe(30);
    expect(sim.usedBytes).toBe(110);
  });

  test('removing a file gives its room back once its last descriptor closes', () => {
    const sim = diskWithDirectory(1, 100);
    const fd = sim.openSync('/d/f', 'w');
    sim.writeSync(fd, new Uint8Array(100), 0, 100, 0);
    sim.unlinkSync('/d/f');
    expect(sim.usedBytes).toBe(100);
    sim.closeSync(fd);
    expect(sim.usedBytes).toBe(0);
    sim.rmSync('/d', { recursive: true, force: true });
    sim.rmSync('/d', { recursive: true, force: true }); // force: a missing path is fine
  });
});

describe('SimDisk: directory locks', () => {
  test('held until released or the host crashes', () => {
    const sim = diskWithDirectory();
    const release = sim.lockSync('/d');
    expect(() => sim.lockSync('/d')).toThrow(/in use/);
    release();
    const again = sim.lockSync('/d');
    sim.crash();
    const afterCrash = sim.lockSync('/d');
    again(); // a stale holder's release frees nothing
    expect(() => sim.lockSync('/d')).toThrow(/in use/);
    afterCrash();
  });
});

/** `disk` whose fdatasyncs do nothing (a log that forgot them): names are still made durable. */
function withoutDataSyncs(sim: SimDisk): Disk {
  const sync: FileSync = {
    syncSync: (fd) => sim.syncSync(fd),
    sync: (fd) => sim.sync(fd),
    dataSyncSync: () => {},
    dataSync: () => Promise.resolve(),
    syncDirectorySync: (path) => sim.syncDirectorySync(path),
    syncDirectory: (path) => sim.syncDirectory(path),
  };
  return diskWithSync(sim, sync);
}

const BATCHES = 20;
const T0 = 1_700_000_000_000;

/** Small enough that the batches roll segments (new names in the directory), or large enough that they do not. */
const ROLLING_SEGMENT_BYTES = 4096;
const ONE_SEGMENT_BYTES = 1024 * 1024;

/** Appends BATCHES batches to a log on `target`, each awaited durable, crashes the host, reopens: how many came back intact. */
async function acknowledgedAfterCrash(sim: SimDisk, target: Disk, segmentBytes: number): Promise<number> {
  const config = { segmentBytes, flush: { kind: 'per-append' } } as const;
  const log = PartitionLog.open('/data/t-0', { disk: target, clock: new ManualClock(T0), config });
  const acknowledged: Uint8Array[] = [];
  for (let i = 0; i < BATCHES; i++) {
    const { batches, lastOffset } = log.append(batchOf(`b${i}`, 2, T0, 300), 0);
    await log.waitForFlush(lastOffset);
    acknowledged.push(batches[0]!.bytes.slice());
  }
  expect(log.segmentBaseOffsets.length > 1).toBe(segmentBytes === ROLLING_SEGMENT_BYTES);
  sim.crash();
  const reopened = PartitionLog.open('/data/t-0', { disk: sim, clock: new ManualClock(T0), config });
  let intact = 0;
  for (let i = 0; i < BATCHES && 2 * i < reopened.logEndOffset; i++) {
    const [batch] = reopened.read(2 * i, 1).batches;
    if (batch !== undefined && Buffer.from(batch.bytes).equals(Buffer.from(acknowledged[i]!))) intact++;
  }
  await reopened.close();
  return intact;
}

describe('a log on the simulated disk', () => {
  test('every acknowledged batch survives a power loss', async () => {
    for (let seed = 1; seed <= 5; seed++) {
      for (const segmentBytes of [ROLLING_SEGMENT_BYTES, ONE_SEGMENT_BYTES]) {
        const sim = disk(seed);
        expect(await acknowledgedAfterCrash(sim, sim, segmentBytes)).toBe(BATCHES);
      }
    }
  });

  test('without its fdatasyncs it loses acknowledged batches (the check above can fail)', async () => {
    // One segment: a roll's fdatasync is what keeps a sealed segment (recovery scans only the
    // active one), so without it a sealed segment's index would vouch for bytes that are gone.
    const sim = disk(1);
    expect(await acknowledgedAfterCrash(sim, withoutDataSyncs(sim), ONE_SEGMENT_BYTES)).toBeLessThan(BATCHES);
  });
});

test("a full simulated disk fails an append as the log's Storage error, and the log takes writes once room is back", async () => {
  const sim = disk(1);
  const log = PartitionLog.open('/data/t-0', { disk: sim, clock: new ManualClock(T0), config: { flush: { kind: 'per-append' } } });
  log.append(batchOf('a', 1, T0, 100), 0);
  sim.setCapacity(sim.usedBytes + 50);
  let failure: unknown;
  try {
    log.append(batchOf('b', 1, T0, 100), 0);
  } catch (error) {
    failure = error;
  }
  expect(isFerryError(failure, 'Storage')).toBe(true);
  expect(isOsError(failure)).toBe(true); // the broker answers KAFKA_STORAGE_ERROR, the process lives
  expect(log.logEndOffset).toBe(1);
  sim.setCapacity(Number.POSITIVE_INFINITY);
  expect(log.append(batchOf('c', 1, T0, 100), 0).baseOffset).toBe(1);
  await log.close();
});

test('after a failed fdatasync (its pages dropped), the log writes them again: every batch acknowledged after survives a power loss', async () => {
  const sim = disk(1);
  const config = { flush: { kind: 'group', bytes: 1, ms: 60_000 } } as const; // each append syncs at once, asynchronously
  const log = PartitionLog.open('/data/t-0', { disk: sim, clock: new ManualClock(T0), config });
  await log.waitForFlush(log.append(batchOf('a', 1, T0, 100), 0).lastOffset);
  sim.failNextSyncs(1);
  await expect(log.waitForFlush(log.append(batchOf('b', 1, T0, 100), 0).lastOffset)).rejects.toThrow(/fdatasync failed/);
  await log.waitForFlush(log.append(batchOf('c', 1, T0, 100), 0).lastOffset); // acknowledged: b is below it
  sim.crash();
  const reopened = PartitionLog.open('/data/t-0', { disk: sim, clock: new ManualClock(T0), config });
  expect(reopened.logEndOffset).toBe(3);
  await reopened.close();
});

describe('an engine on the simulated disk', () => {
  async function producedAfterCrash(sim: SimDisk, target: Disk): Promise<string[]> {
    const options = { directory: '/node-1', clock: new ManualClock(T0), random: new SeededRandom(3), log: { flush: { kind: 'per-append' } } } as const;
    const engine = await Engine.open({ ...options, disk: target });
    engine.createTopic('events', { partitions: 1 });
    for (let i = 0; i < 10; i++) await engine.produce('events', [{ value: `v${i}` }], { acks: 'all' });
    sim.crash(); // the engine is never closed: its host lost power
    const reopened = await Engine.open({ ...options, disk: sim });
    const values: string[] = [];
    for (const batch of reopened.fetch('events', 0, 0).batches) for (const record of batch.records()) values.push(new TextDecoder().decode(record.value!));
    await reopened.close();
    return values;
  }

  test('a topic and every record produced with acks=all survive a power loss', async () => {
    const sim = disk(2);
    expect(await producedAfterCrash(sim, sim)).toEqual(Array.from({ length: 10 }, (_, i) => `v${i}`));
  });

  test('without fdatasyncs the records are lost', async () => {
    const sim = disk(2);
    expect((await producedAfterCrash(sim, withoutDataSyncs(sim))).length).toBeLessThan(10);
  });
});
