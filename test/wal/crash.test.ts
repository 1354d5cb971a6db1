import { expect, test } from 'bun:test';
import { FileStore } from '../../src/store/file.ts';
import { decodeWalObject } from '../../src/wal/format.ts';
import { listEpochs, listSequences } from '../../src/wal/seal.ts';
import { readLines } from '../support/child-lines.ts';
import { restoreSyncedState } from '../support/power-loss.ts';
import { tempDir } from '../support/temp-dir.ts';

/**
 * Reads acknowledgements from the child until `count` arrived, then kills it with SIGKILL. With
 * a `journal`, the child's store records its fsyncs there, and the store's disk is then rebuilt
 * as a power cut leaves it: a SIGKILL alone keeps the page cache, so it cannot catch a missing fsync.
 */
async function runAndKill(directory: string, storeRoot: string, count: number, acknowledgedOffsets: Set<string>, journal?: string): Promise<Map<number, number>> {
  const child = Bun.spawn([process.execPath, `${import.meta.dir}/../support/wal-crash-writer.ts`, directory, storeRoot, ...(journal === undefined ? [] : [journal])], {
    stdout: 'pipe',
    stderr: 'inherit',
  });
  const acknowledged = new Map<number, number>();
  let seen = 0;
  await readLines(child, (line) => {
    const [, partition, offset] = line.split(' ').map(Number);
    acknowledged.set(partition!, Math.max(acknowledged.get(partition!) ?? -1, offset!));
    acknowledgedOffsets.add(`${partition}:${offset! - 1}`).add(`${partition}:${offset}`); // two records per produce
    return ++seen < count;
  });
  child.kill('SIGKILL');
  await child.exited;
  expect(seen).toBeGreaterThanOrEqual(count);
  if (journal !== undefined) restoreSyncedState(journal, storeRoot);
  return acknowledged;
}

for (const fault of ['SIGKILL', 'power loss of the store']) {
  test(`${fault} at random points: every acknowledged offset is in the WAL streams, once and in order`, async () => {
    const directory = tempDir();
    const storeRoot = tempDir('ferry-store-');
    const journal = fault === 'SIGKILL' ? undefined : tempDir('ferry-journal-');
    const acknowledged = new Map<number, number>();
    const acknowledgedOffsets = new Set<string>();
    for (const count of [37, 151, 90]) {
      for (const [partition, offset] of await runAndKill(directory, storeRoot, count, acknowledgedOffsets, journal)) acknowledged.set(partition, Math.max(acknowledged.get(partition) ?? -1, offset));
    }
    const store = await FileStore.open(storeRoot);
    const shipped = new Map<number, number[]>();
    const epochs = await listEpochs(store, '', 'crashy');
    expect(epochs).toEqual([0, 1, 2]);
    for (const epoch of epochs) {
      const sequences = await listSequences(store, '', { writerId: 'crashy', epoch });
      for (let sequence = 0; sequences.has(sequence); sequence++) {
        const object = decodeWalObject((await store.get(`wal/crashy/${String(epoch).padStart(10, '0')}/${String(sequence).padStart(20, '0')}`)).body);
        if (object.header.kind === 'seal') break; // epochs 0 and 1 were sealed by the next start
        for (const { entry } of object.frames) {
          const offsets = shipped.get(entry.partition) ?? [];
          for (let offset = entry.baseOffset; offset <= entry.lastOffset; offset++) offsets.push(offset);
          shipped.set(entry.partition, offsets);
        }
      }
    }
    for (const [partition, lastAcknowledged] of acknowledged) {
      const offsets = shipped.get(partition)!;
      // The streams hold each partition from 0, every offset once and in order: no gap a follower
      // would stop at (a restart re-ships what its last run appended but never shipped) ...
      expect(offsets).toEqual(Array.from({ length: offsets.length }, (_, i) => i));
      // ... and every acknowledged offset is among them.
      expect(offsets.length).toBeGreaterThan(lastAcknowledged);
    }
    for (const key of acknowledgedOffsets) {
      const [partition, offset] = key.split(':').map(Number);
      expect(shipped.get(partition!)!.includes(offset!)).toBe(true);
    }
    await store.close();
  }, 60_000);
}
