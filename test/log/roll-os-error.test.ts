// A segment roll that meets an OS error half-way (finding 18, adversarial review). Rolling
// creates the new segment file, then fsyncs the directory so its name survives a power loss;
// the directory fsync opens the directory, which needs one more descriptor. At the limit the file
// was created and the fsync failed with EMFILE: that append failed (fine, per request), but the
// new file stayed behind with its descriptor leaked, and every later roll tried to create it
// again, 'wx' failing with EEXIST: the partition refused every write until a restart.
import { afterEach, expect, test } from 'bun:test';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { type FileSync, systemFileSync } from '../../src/util/file-sync.ts';
import { batchOf } from '../support/batches.ts';
import { tempDir } from '../support/temp-dir.ts';
import { diskWithSync, systemDisk } from '../../src/util/disk.ts';

const logs: PartitionLog[] = [];
afterEach(async () => {
  for (const log of logs.splice(0)) await log.close().catch(() => {});
});

/** The system's barriers, but the directory fsync `failAt` calls from now fails as out of descriptors. */
function flakyDirectories(): FileSync & { failAt: number } {
  const files = {
    ...systemFileSync,
    failAt: 0,
    syncDirectorySync(path: string): void {
      if (files.failAt > 0 && --files.failAt === 0) throw Object.assign(new Error(`EMFILE: too many open files, open '${path}'`), { code: 'EMFILE', syscall: 'open', errno: -24 });
      systemFileSync.syncDirectorySync(path);
    },
  };
  return files;
}

test('after a roll failed on EMFILE, appends succeed again once descriptors are back', async () => {
  const files = flakyDirectories();
  const log = PartitionLog.open(tempDir(), { config: { segmentBytes: 1024, flush: { kind: 'none' } }, disk: diskWithSync(systemDisk, files) });
  logs.push(log);
  const value = 600; // two batches fill a segment: the second append rolls
  log.append(batchOf('a', 1, 1_700_000_000_000, value), 0);
  // the roll writes the sealed segment's two indexes (a directory fsync each), then creates the
  // new segment and fsyncs the directory: that third one fails
  files.failAt = 3;
  expect(() => log.append(batchOf('b', 1, 1_700_000_000_000, value), 0)).toThrow(/EMFILE/);
  expect(files.failAt).toBe(0);
  for (let i = 0; i < 4; i++) log.append(batchOf(`c${i}`, 1, 1_700_000_000_000, value), 0);
  expect(log.logEndOffset).toBe(5);
});
