// Issue 9 "Done when" (e), finding 16: a broker whose data directory fills up answers
// KAFKA_STORAGE_ERROR (retriable) and, once space is freed while it runs, takes produce requests
// again without a restart; nothing acknowledged is lost, duplicated or moved; the failure is
// logged once. At 61acc49 it logged nothing and its shipped-checkpoint timer threw uncaught.
// The longer form over seeds: `bun test/faults/full-disk-runs.ts --help`.
import { expect, setDefaultTimeout, test } from 'bun:test';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { describeVerdict } from '../support/ack-ledger.ts';
import { tempDir } from '../support/temp-dir.ts';
import { mountTmpfs, runFullDisk } from './full-disk-scenario.ts';

setDefaultTimeout(120_000);

test('produce resumes without a restart once a full data directory has room again', async () => {
  const root = tempDir();
  const disk = join(root, 'disk');
  mkdirSync(disk);
  const cannotMount = mountTmpfs(disk);
  if (cannotMount !== null) {
    console.warn(`full-disk test skipped: cannot mount a tmpfs (needs root): ${cannotMount}`);
    return;
  }
  try {
    const result = await runFullDisk(16, root);
    const { verdict } = result;
    expect({ ranThroughout: result.ranThroughout, failureLines: result.failureLines, recoveryLines: result.recoveryLines, uncaughtError: result.uncaughtError })
      .toEqual({ ranThroughout: true, failureLines: 1, recoveryLines: 1, uncaughtError: false });
    expect(verdict.acknowledged).toBeGreaterThan(0);
    expect({ lost: verdict.lost.length, duplicated: verdict.duplicated.length, misplaced: verdict.misplaced.length, summary: describeVerdict(verdict) })
      .toEqual({ lost: 0, duplicated: 0, misplaced: 0, summary: describeVerdict(verdict) });
  } finally {
    Bun.spawnSync(['umount', disk]);
  }
});
