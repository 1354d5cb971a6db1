// A follower meeting an operating-system error (finding 18, adversarial review: errors of the OS
// never end anything). A checkpoint or an apply that hit EMFILE (the epoch checkpoint, an index,
// a new segment: each a new file) threw out of the follower's loop, which records any throw as
// its final failure: the replica stopped for good after one transient fault, silently serving
// stale data from then on. An OS error must be retried, as a failed read is.
import { expect, test } from 'bun:test';
import { join } from 'node:path';
import { Ferry } from '../../src/ferry/index.ts';
import type { LogConfig } from '../../src/log/config.ts';
import { PartitionLog } from '../../src/log/partition-log.ts';
import { MemoryStore } from '../../src/store/memory.ts';
import { systemClock } from '../../src/util/clock.ts';
import { type FileSync, systemFileSync } from '../../src/util/file-sync.ts';
import { SeededRandom } from '../../src/util/random.ts';
import { DEFAULT_FOLLOWER_CONFIG, Follower } from '../../src/partition/follower.ts';
import { DEFAULT_WAL_READER_CONFIG, WalReader } from '../../src/wal/reader.ts';
import { tempDir } from '../support/temp-dir.ts';
import { diskWithSync, systemDisk } from '../../src/util/disk.ts';

const LOG: Partial<LogConfig> = { segmentBytes: 16 * 1024, flush: { kind: 'none' } };
const RECORDS = 200;

/** The system's barriers, but the first `failures` fsyncs of a file fail as out of descriptors. */
function failingFirst(failures: number): FileSync & { failed: number } {
  const files = {
    ...systemFileSync,
    failed: 0,
    syncSync(fd: number): void {
      if (files.failed < failures) {
        files.failed++;
        throw Object.assign(new Error('EMFILE: too many open files, fsync'), { code: 'EMFILE', syscall: 'fsync', errno: -24 });
      }
      systemFileSync.syncSync(fd);
    },
  };
  return files;
}

async function until(condition: () => boolean, what: string, timeoutMs = 20_000): Promise<void> {
  const deadline = performance.now() + timeoutMs;
  while (!condition()) {
    if (performance.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await Bun.sleep(2);
  }
}

test('a follower whose checkpoints and applies meet EMFILE keeps following and catches up', async () => {
  const store = new MemoryStore({ seed: 5 });
  const leader = await Ferry.open({ directory: tempDir(), log: LOG, wal: { store, writerId: 'leader', prefix: 'c', config: { uploadBytes: 4 * 1024, uploadIntervalMs: 2 }, seed: 3 } });
  await leader.createTopic('events', { partitions: 1 });
  for (let i = 0; i < RECORDS; i++) await leader.produce('events', [{ value: `v${i}-${'x'.repeat(100)}` }]);

  const directory = tempDir();
  const files = failingFirst(6);
  const disk = diskWithSync(systemDisk, files);
  const logs = new Map<string, PartitionLog>();
  const target = {
    log(topic: string, partition: number): PartitionLog {
      const key = `${topic}-${partition}`;
      let log = logs.get(key);
      if (log === undefined) logs.set(key, (log = PartitionLog.open(join(directory, key), { config: LOG, disk })));
      return log;
    },
  };
  const reader = new WalReader(
    store,
    { ...DEFAULT_WAL_READER_CONFIG, prefix: 'c', wants: () => true, retry: { attempts: 5, baseMs: 1, capMs: 5 } },
    { clock: systemClock, random: new SeededRandom(7) },
  );
  const follower = new Follower(
    store,
    reader,
    target,
    { ...DEFAULT_FOLLOWER_CONFIG, writerId: 'leader', pollIntervalMs: 2, checkpointIntervalMs: 0 },
    { clock: systemClock, checkpointPath: join(directory, 'follower.checkpoint'), disk },
  );
  follower.start();
  try {
    await until(() => follower.failure !== null || (logs.get('events-0')?.logEndOffset ?? 0) === RECORDS, 'the follower to catch up');
    expect(follower.failure).toBeNull();
    expect(files.failed).toBe(6); // the faults did happen
    expect(logs.get('events-0')!.logEndOffset).toBe(RECORDS);
  } finally {
    await follower.stop().catch(() => {});
    for (const log of logs.values()) await log.close();
    await leader.close();
  }
});
