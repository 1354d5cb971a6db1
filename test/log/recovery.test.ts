import { describe, expect, test } from 'bun:test';
import { copyFileSync, existsSync, readdirSync, readFileSync, truncateSync, unlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { isFerryError } from '../../src/errors.ts';
import { CLEAN_SHUTDOWN_FILE, PartitionLog } from '../../src/log/partition-log.ts';
import { LOCK_FILE } from '../../src/util/dir-lock.ts';
import { batchOf, decode } from '../support/batches.ts';
import { readLines } from '../support/child-lines.ts';
import { PowerLossRecorder, restoreSyncedState } from '../support/power-loss.ts';
import { tempDir } from '../support/temp-dir.ts';
import { diskWithSync, systemDisk } from '../../src/util/disk.ts';

const ACTIVE = '00000000000000000000.log';

/** The files a crash would leave: everything but the lock, copied while the log is still open. */
function crashImage(source: string): string {
  const target = tempDir('ferry-crash-');
  for (const name of readdirSync(source)) if (name !== LOCK_FILE) copyFileSync(join(source, name), join(target, name));
  return target;
}

/** A log of five batches, open and flushed; returns its directory and each batch's bytes. */
async function fiveBatches(): Promise<{ dir: string; log: PartitionLog; batches: Uint8Array[] }> {
  const dir = tempDir();
  const log = PartitionLog.open(dir);
  const batches = [0, 1, 2, 3, 4].map((i) => Uint8Array.from(log.append(batchOf(`b${i}`, 2, 1_700_000_000_000 + i), i < 3 ? 0 : 1).batches[0]!.bytes));
  await log.flush();
  return { dir, log, batches };
}

function readAll(log: PartitionLog): Uint8Array[] {
  return log.read(log.logStartOffset, 1 << 30).batches.map((batch) => Uint8Array.from(batch.bytes));
}

describe('crash recovery of the active segment', () => {
  test('a cut at every byte of the last batch keeps exactly the batches before it', async () => {
    const { dir, log, batches } = await fiveBatches();
    const image = crashImage(dir);
    await log.close();
    const lastStart = batches.slice(0, 4).reduce((sum, b) => sum + b.length, 0);
    for (let cut = lastStart; cut < lastStart + batches[4]!.length; cut++) {
      const copy = crashImage(image);
      truncateSync(join(copy, ACTIVE), cut);
      const recovered = PartitionLog.open(copy);
      expect(recovered.recovery.cleanShutdown).toBe(false);
      expect(recovered.recovery.truncatedBytes).toBe(cut - lastStart);
      expect(recovered.logEndOffset).toBe(8);
      expect(readAll(recovered)).toEqual(batches.slice(0, 4));
      expect(readFileSync(join(copy, ACTIVE)).length).toBe(lastStart);
      await recovered.close();
    }
  });

  test('a flipped bit at every byte of the last batch is caught, header and body', async () => {
    const { dir, log, batches } = await fiveBatches();
    const image = crashImage(dir);
    await log.close();
    const lastStart = batches.slice(0, 4).reduce((sum, b) => sum + b.length, 0);
    const reasons = new Set<string>();
    for (let at = lastStart; at < lastStart + batches[4]!.length; at++) {
      const copy = crashImage(image);
      const bytes = readFileSync(join(copy, ACTIVE));
      bytes[at]! ^= 0x10;
      writeFileSync(join(copy, ACTIVE), bytes);
      const recovered = PartitionLog.open(copy);
      expect(recovered.logEndOffset).toBe(8);
      expect(readAll(recovered)).toEqual(batches.slice(0, 4));
      reasons.add(recovered.recovery.stopReason!.replace(/\d+/g, 'N').slice(0, 60));
      // The log goes on from where it was cut.
      expect(recovered.append(batchOf('after'), 1).baseOffset).toBe(8);
      await recovered.close();
    }
    // Offset, length, epoch, magic and CRC are each caught by their own check.
    expect([...reasons].join('\n')).toMatch(/where N was expected/);
    expect([...reasons].join('\n')).toMatch(/epoch cache/);
    expect([...reasons].join('\n')).toMatch(/magic/);
    expect([...reasons].join('\n')).toMatch(/crc/);
  });

  test('corruption in the middle drops that batch and everything after it', async () => {
    const { dir, log, batches } = await fiveBatches();
    const copy = crashImage(dir);
    await log.close();
    const bytes = readFileSync(join(copy, ACTIVE));
    bytes[batches[0]!.length + 40]! ^= 1;
    writeFileSync(join(copy, ACTIVE), bytes);
    const recovered = PartitionLog.open(copy);
    expect(readAll(recovered)).toEqual(batches.slice(0, 1));
    expect(recovered.latestEpoch).toBe(0); // epoch 1 started at offset 6, which is gone
    await recovered.close();
  });

  test('garbage after the last batch (a torn write) is cut', async () => {
    const { dir, log, batches } = await fiveBatches();
    const copy = crashImage(dir);
    await log.close();
    writeFileSync(join(copy, ACTIVE), Buffer.concat([readFileSync(join(copy, ACTIVE)), Buffer.alloc(100, 0)]));
    const recovered = PartitionLog.open(copy);
    expect(recovered.recovery.truncatedBytes).toBe(100);
    expect(readAll(recovered)).toEqual(batches);
    await recovered.close();
  });
});

describe('reopening', () => {
  test('a clean close restores state without scanning, and removes the marker', async () => {
    const dir = tempDir();
    const log = PartitionLog.open(dir, { config: { segmentBytes: 1024 } });
    for (let i = 0; i < 20; i++) log.append(batchOf(`b${i}`, 1, 1_700_000_000_000 + i, 100), 0);
    const before = readAll(log);
    await log.close();
    expect(existsSync(join(dir, CLEAN_SHUTDOWN_FILE))).toBe(true);
    const reopened = PartitionLog.open(dir, { config: { segmentBytes: 1024 } });
    expect(reopened.recovery).toMatchObject({ cleanShutdown: true, segmentsScanned: 0 });
    expect(existsSync(join(dir, CLEAN_SHUTDOWN_FILE))).toBe(false);
    expect(readAll(reopened)).toEqual(before);
    expect(reopened.offsetForTimestamp(1_700_000_000_000 + 13)?.offset).toBe(13);
    await reopened.close();
  });

  test('missing index files of sealed segments are rebuilt by scanning', async () => {
    const dir = tempDir();
    const log = PartitionLog.open(dir, { config: { segmentBytes: 1024 } });
    for (let i = 0; i < 20; i++) log.append(batchOf(`b${i}`, 1, 1_700_000_000_000, 100), 0);
    const before = readAll(log);
    await log.close();
    for (const name of readdirSync(dir)) if (name.endsWith('.index')) unlinkSync(join(dir, name));
    const reopened = PartitionLog.open(dir, { config: { segmentBytes: 1024 } });
    expect(reopened.recovery.segmentsScanned).toBe(reopened.segmentBaseOffsets.length); // the active one lost its index too
    expect(readAll(reopened)).toEqual(before);
    expect(decode([...reopened.read(17, 10).batches[0]!.records()][0]!.value)).toStartWith('b17-0');
    await reopened.close();
  });

  test('a lost leader-epoch checkpoint is relearned from the batches, losing nothing', async () => {
    const { dir, log, batches } = await fiveBatches();
    const copy = crashImage(dir);
    await log.close();
    unlinkSync(join(copy, 'leader-epoch-checkpoint'));
    const recovered = PartitionLog.open(copy);
    expect(readAll(recovered)).toEqual(batches);
    expect(recovered.latestEpoch).toBe(1);
    await recovered.close();
  });
});

describe('directory lock', () => {
  test('a second open, in this process or another, is refused with Locked', async () => {
    const dir = tempDir();
    const log = PartitionLog.open(dir);
    let caught: unknown;
    try {
      PartitionLog.open(dir);
    } catch (error) {
      caught = error;
    }
    expect(isFerryError(caught, 'Locked')).toBe(true);
    const child = Bun.spawnSync([
      process.execPath,
      '-e',
      `import { PartitionLog } from '${import.meta.dir}/../../src/log/partition-log.ts'; try { PartitionLog.open(${JSON.stringify(dir)}); console.log('opened'); } catch (e) { console.log(e.kind); }`,
    ]);
    expect(child.stdout.toString().trim()).toBe('Locked');
    await log.close();
    const again = PartitionLog.open(dir);
    await again.close();
  });
});

/** Every offset below the log end is in whole, CRC-valid batches; returns the log end. */
function expectWholeLog(log: PartitionLog): number {
  let count = 0;
  for (let offset = 0; offset < log.logEndOffset; ) {
    const { batches } = log.read(offset, 1 << 20);
    for (const batch of batches) {
      expect(batch.isCrcValid()).toBe(true);
      count += batch.recordCount;
    }
    offset = batches.at(-1)!.nextOffset;
  }
  expect(count).toBe(log.logEndOffset);
  return log.logEndOffset;
}

describe('killed writer process', () => {
  for (const policy of ['per-append', 'group']) {
    test(`${policy}: every acknowledged offset survives SIGKILL`, async () => {
      const dir = tempDir();
      for (let round = 0; round < 3; round++) {
        const child = Bun.spawn([process.execPath, `${import.meta.dir}/../support/crash-writer.ts`, dir, policy], { stdout: 'pipe', stderr: 'inherit' });
        let acknowledged = -1;
        const target = 200 + round * 137; // kill at different points in each round
        let acks = 0;
        await readLines(child, (line) => {
          acknowledged = Math.max(acknowledged, Number(line.slice(4)));
          return ++acks < target;
        });
        child.kill('SIGKILL');
        await child.exited;
        expect(acks).toBeGreaterThanOrEqual(target);
        const log = PartitionLog.open(dir, { config: { segmentBytes: 64 * 1024 } });
        expect(expectWholeLog(log)).toBeGreaterThan(acknowledged);
        await log.close();
      }
    });
  }
});

// A SIGKILL keeps the page cache, so the test above passes with fsync removed. Here the writer's
// fsyncs are recorded, and after the kill the disk is rebuilt as a power cut leaves it: only
// synced bytes, only names whose directory was synced (power-loss.ts). The log lives one level
// down, so the directory's own creation must be made durable too.
describe('power loss', () => {
  for (const policy of ['per-append', 'group']) {
    test(`${policy}: every acknowledged offset survives losing every unsynced byte and name`, async () => {
      const root = tempDir();
      const journal = tempDir('ferry-journal-');
      const dir = join(root, 'events-0');
      let logEnd = 0;
      for (let round = 0; round < 3; round++) {
        const writer = `${import.meta.dir}/../support/crash-writer.ts`;
        const child = Bun.spawn([process.execPath, writer, dir, policy, root, journal], { stdout: 'pipe', stderr: 'inherit' });
        let acknowledged = -1;
        const target = 300 + round * 137; // cut at different points in each round; 64 KiB segments roll
        let acks = 0;
        await readLines(child, (line) => {
          acknowledged = Math.max(acknowledged, Number(line.slice(4)));
          return ++acks < target;
        });
        child.kill('SIGKILL');
        await child.exited;
        expect(acks).toBeGreaterThanOrEqual(target);
        restoreSyncedState(journal, root);
        const log = PartitionLog.open(dir, { config: { segmentBytes: 64 * 1024 } });
        expect(log.recovery.cleanShutdown).toBe(false);
        expect(log.logEndOffset).toBeGreaterThan(acknowledged);
        expect(log.logEndOffset).toBeGreaterThanOrEqual(logEnd); // what the last round's reopen found stayed
        logEnd = expectWholeLog(log);
        await log.close();
      }
      expect(readdirSync(dir).filter((name) => name.endsWith('.log')).length).toBeGreaterThan(1);
    }, 60_000);
  }

  test('the clean-shutdown marker, removed at open, stays removed: back from the dead it would vouch for a changed file', async () => {
    const T = 1_700_000_000_000;
    const root = tempDir();
    const dir = join(root, 'events-0');
    const two = batchOf('b', 2, T);
    let valueBytes = 0;
    while (batchOf('c', 1, T, valueBytes).length < two.length) valueBytes++;
    const one = batchOf('c', 1, T, valueBytes); // the size of `two`, one record fewer
    expect(one.length).toBe(two.length);
    const config = { flush: { kind: 'per-append' } } as const;
    const first = PartitionLog.open(dir, { config });
    first.append(batchOf('a', 2, T), 0);
    first.append(two, 0);
    await first.close(); // marker: log end 4 at this file size
    const journal = tempDir('ferry-journal-');
    const log = PartitionLog.open(dir, { config, disk: diskWithSync(systemDisk, new PowerLossRecorder(root, journal)) });
    log.truncateTo(2);
    log.append(one, 0); // synced: offsets 0-2, the same file size as at the clean shutdown
    const image = tempDir('ferry-cut-');
    restoreSyncedState(journal, image);
    const after = PartitionLog.open(join(image, 'events-0'));
    expect(after.recovery.cleanShutdown).toBe(false);
    expect(after.logEndOffset).toBe(3);
    await after.close();
    await log.close();
  });
});
