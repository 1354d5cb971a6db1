// A cluster broker whose disk failed hands its partitions off (src/cluster/membership.ts, [C1]
// storageFailing) and then has no write of its own to learn that the disk works again: the probe
// is that write. It must tell a failing disk from a working one and leave nothing behind.
import { afterEach, expect, test } from 'bun:test';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { STORAGE_PROBE_FILE, probeStorage } from '../../src/log/storage-probe.ts';
import { StorageHealth } from '../../src/log/storage-health.ts';
import { systemDisk } from '../../src/util/disk.ts';
import { failNext, healDisk } from '../support/failing-fs.ts';
import { tempDir } from '../support/temp-dir.ts';

afterEach(healDisk);

test('a probe on a full disk fails, reports the failure and leaves no file; on a working disk it ends the failure spell', () => {
  const directory = tempDir();
  const health = new StorageHealth();
  failNext('writeSync');
  expect(probeStorage(systemDisk, directory, health)).toBe(false);
  expect(health.failing).toBe(true);
  expect(existsSync(join(directory, STORAGE_PROBE_FILE))).toBe(false);
  expect(probeStorage(systemDisk, directory, health)).toBe(true);
  expect(health.failing).toBe(false);
  expect(existsSync(join(directory, STORAGE_PROBE_FILE))).toBe(false);
});

test('a failed sync fails the probe too: a page the disk took but could not make durable is no room', () => {
  const directory = tempDir();
  const health = new StorageHealth();
  failNext('fdatasyncSync');
  expect(probeStorage(systemDisk, directory, health)).toBe(false);
  expect(health.failing).toBe(true);
});
