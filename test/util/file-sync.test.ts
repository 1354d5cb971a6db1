import { describe, expect, test } from 'bun:test';
import { closeSync, existsSync, linkSync, mkdirSync, openSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { diskWithSync, systemDisk } from '../../src/util/disk.ts';
import { systemFileSync } from '../../src/util/file-sync.ts';
import { writeFileAtomicSync } from '../../src/util/files.ts';
import { PowerLossRecorder, restoreSyncedState } from '../support/power-loss.ts';
import { tempDir } from '../support/temp-dir.ts';

/** A recorder over a fresh root, and a way to see the disk a power cut would leave now. */
function disk() {
  const root = tempDir();
  const journal = tempDir('ferry-journal-');
  const files = new PowerLossRecorder(root, journal);
  const afterCut = (): string => {
    const image = tempDir('ferry-cut-');
    restoreSyncedState(journal, image);
    return image;
  };
  return { root, files, afterCut };
}

function append(path: string, text: string): number {
  const fd = openSync(path, 'a');
  writeSync(fd, text);
  return fd;
}

describe('systemFileSync', () => {
  test('syncs files and directories without error, synchronously and not', async () => {
    const root = tempDir();
    const fd = append(join(root, 'f'), 'x');
    systemFileSync.syncSync(fd);
    systemFileSync.dataSyncSync(fd);
    await systemFileSync.sync(fd);
    await systemFileSync.dataSync(fd);
    closeSync(fd);
    systemFileSync.syncDirectorySync(root);
    await systemFileSync.syncDirectory(root);
    expect(readFileSync(join(root, 'f'), 'utf8')).toBe('x');
  });
});

describe('a simulated power cut (PowerLossRecorder)', () => {
  test('what was on disk when the recorder was made survives', () => {
    const root = tempDir();
    mkdirSync(join(root, 'd'));
    writeFileSync(join(root, 'd', 'old'), 'before');
    const journal = tempDir('ferry-journal-');
    new PowerLossRecorder(root, journal);
    const image = tempDir('ferry-cut-');
    restoreSyncedState(journal, image);
    expect(readFileSync(join(image, 'd', 'old'), 'utf8')).toBe('before');
  });

  test('bytes written after the last fsync are lost; those before it stay', () => {
    const { root, files, afterCut } = disk();
    const fd = append(join(root, 'f'), 'synced');
    files.dataSyncSync(fd);
    files.syncDirectorySync(root);
    writeSync(fd, ' and not');
    closeSync(fd);
    expect(readFileSync(join(afterCut(), 'f'), 'utf8')).toBe('synced');
  });

  test('a new file whose directory was not synced is gone, even if its bytes were synced', () => {
    const { root, files, afterCut } = disk();
    const fd = append(join(root, 'f'), 'x');
    files.syncSync(fd);
    closeSync(fd);
    expect(readdirSync(afterCut())).toEqual([]);
    files.syncDirectorySync(root);
    expect(readFileSync(join(afterCut(), 'f'), 'utf8')).toBe('x');
  });

  test('a name made durable before its bytes were synced is an empty file', () => {
    const { root, files, afterCut } = disk();
    closeSync(append(join(root, 'f'), 'unsynced'));
    files.syncDirectorySync(root);
    expect(readFileSync(join(afterCut(), 'f'), 'utf8')).toBe('');
  });

  test('a rename, a link or an unlink is undone until the directory is synced', () => {
    const { root, files, afterCut } = disk();
    writeFileAtomicSync(join(root, 'a'), new TextEncoder().encode('one'), diskWithSync(systemDisk, files));
    const fd = append(join(root, 'b.tmp'), 'two');
    files.syncSync(fd);
    closeSync(fd);
    renameSync(join(root, 'b.tmp'), join(root, 'a'));
    linkSync(join(root, 'a'), join(root, 'c'));
    let image = afterCut();
    expect(readdirSync(image)).toEqual(['a']);
    expect(readFileSync(join(image, 'a'), 'utf8')).toBe('one');
    files.syncDirectorySync(root);
    image = afterCut();
    expect(readdirSync(image).sort()).toEqual(['a', 'c']);
    expect(readFileSync(join(image, 'c'), 'utf8')).toBe('two');
    unlinkSync(join(root, 'c'));
    expect(existsSync(join(afterCut(), 'c'))).toBe(true);
  });

  test('a new directory holds nothing unless it was synced itself, and exists only if its parent was', async () => {
    const { root, files, afterCut } = disk();
    mkdirSync(join(root, 'd'));
    const fd = append(join(root, 'd', 'f'), 'x');
    await files.dataSync(fd);
    closeSync(fd);
    await files.syncDirectory(root);
    expect(readdirSync(join(afterCut(), 'd'))).toEqual([]);
    await files.syncDirectory(join(root, 'd'));
    expect(readFileSync(join(afterCut(), 'd', 'f'), 'utf8')).toBe('x');
  });
});
