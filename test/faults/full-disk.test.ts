// Issue 9 "Done when" (e), finding 16: a broker whose data directory fills up answers
// KAFKA_STORAGE_ERROR (retriable) and, once space is freed while it runs, takes produce requests
// again without a restart; nothing acknowledged is lost, duplicated or moved; the failure is
// logged once. At 61acc49 it logged nothing and its shipped-checkpoint timer threw uncaught.
// Both with the data directory full and with the WAL store's disk full (appends succeed, uploads
// meet ENOSPC and retry until there is room). The longer form over seeds: `bun test/faults/full-disk-runs.ts --help`.
import { expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describeVerdict } from '../support/ack-ledger.ts';
import { tempDir } from '../support/temp-dir.ts';
import { mountTmpfs, runFullDisk, type FullDiskPlacement } from './full-disk-scenario.ts';

setDefaultTimeout(120_000);

const PLACEMENTS: readonly FullDiskPlacement[] = ['log', 'wal'];

for (const full of PLACEMENTS) {
  test(`produce resumes without a restart once the full ${full} disk has room again`, async () => {
    const root = tempDir();
    const disk = join(root, 'disk');
    mkdirSync(disk);
    const cannotMount = mountTmpfs(disk);
    if (cannotMount !== null) {
      console.warn(`full-disk test skipped: cannot mount a tmpfs (needs root): ${cannotMount}`);
      return;
    }
    try {
      const result = await runFullDisk(16, root, full);
      const { verdict } = result;
      // Each kind of failure that began is logged once and its end once: the log's writes when the
      // data directory fills, the WAL uploads when the WAL store's disk does.
      expect({ ranThroughout: result.ranThroughout, uncaughtError: result.uncaughtError, recoveryLines: result.recoveryLines, walRecoveryLines: result.walRecoveryLines }).toEqual({
        ranThroughout: true,
        uncaughtError: false,
        recoveryLines: result.failureLines,
        walRecoveryLines: result.walFailureLines,
      });
      expect(result.failureLines).toBeLessThanOrEqual(1);
      expect(result.walFailureLines).toBeLessThanOrEqual(1);
      expect(full === 'log' ? result.failureLines : result.walFailureLines).toBe(1);
      expect(verdict.acknowledged).toBeGreaterThan(0);
      expect({ lost: verdict.lost.length, duplicated: verdict.duplicated.length, misplaced: verdict.misplaced.length, summary: describeVerdict(verdict) }).toEqual({
        lost: 0,
        duplicated: 0,
        misplaced: 0,
        summary: describeVerdict(verdict),
      });
    } finally {
      Bun.spawnSync(['umount', disk]);
    }
  });
}
