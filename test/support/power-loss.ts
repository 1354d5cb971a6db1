import { existsSync, fstatSync, lstatSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, relative, sep } from 'node:path';
import type { FileSync } from '../../src/util/file-sync.ts';

/**
 * A power loss for tests. A SIGKILL keeps the page cache, so a crash test that only kills a
 * process passes with every fsync removed. This FileSync records, in a journal directory, what
 * each barrier made durable under `root`, and `restoreSyncedState` rebuilds `root` as a power cut
 * at that moment leaves it, by the strict POSIX rules:
 *
 * - a file's bytes are those of its last fsync/fdatasync (empty if it was never synced);
 * - a name exists only if it was in its directory when that directory was last fsynced, and
 *   then names the file it named then (creates, renames, links and unlinks since are undone);
 * - a directory never fsynced itself holds nothing, whatever its parent says.
 *
 * Everything under `root` when the recorder is made counts as durable (the previous boot).
 * The journal is written with rename, so it stays whole across a SIGKILL of the process that
 * keeps it: a child can be killed at any moment and its parent restore what the child had
 * synced. Records are made when the barrier is called, before it resolves: bytes written while
 * an asynchronous fsync runs are not covered, as the OS does not promise them either. Nothing
 * is really fsynced. Linux only (it reads a file by descriptor through /proc/self/fd).
 *
 * Journal layout: `files/<inode>` the bytes of a file at its last sync; `dirs/<path>.json` the
 * names of a directory at its last sync, `{ name: { file: inode } | { dir: true } }`.
 */
export class PowerLossRecorder implements FileSync {
  readonly root: string;
  readonly journal: string;

  constructor(root: string, journal: string) {
    this.root = root;
    this.journal = journal;
    rmSync(journal, { recursive: true, force: true });
    mkdirSync(join(journal, 'files'), { recursive: true });
    mkdirSync(join(journal, 'dirs'), { recursive: true });
    this.#recordTree(root);
  }

  syncSync(fd: number): void {
    this.#recordFile(fd);
  }

  sync(fd: number): Promise<void> {
    this.#recordFile(fd);
    return Promise.resolve();
  }

  dataSyncSync(fd: number): void {
    this.#recordFile(fd);
  }

  dataSync(fd: number): Promise<void> {
    this.#recordFile(fd);
    return Promise.resolve();
  }

  syncDirectorySync(path: string): void {
    this.#recordDirectory(path);
  }

  syncDirectory(path: string): Promise<void> {
    try {
      this.#recordDirectory(path);
    } catch (error) {
      return Promise.reject(error);
    }
    return Promise.resolve();
  }

  /** The previous boot: every file and directory under `directory` as it is now. */
  #recordTree(directory: string): void {
    this.#recordDirectory(directory);
    for (const entry of readdirSync(directory, { withFileTypes: true })) {
      const path = join(directory, entry.name);
      if (entry.isDirectory()) this.#recordTree(path);
      else if (entry.isFile()) writeAtomically(join(this.journal, 'files', inodeKey(lstatSync(path, { bigint: true }))), readFileSync(path));
    }
  }

  #recordFile(fd: number): void {
    // The descriptor may be write-only (O_WRONLY temporaries): read the inode through /proc.
    const bytes = readFileSync(`/proc/self/fd/${fd}`);
    writeAtomically(join(this.journal, 'files', inodeKey(fstatSync(fd, { bigint: true }))), bytes);
  }

  #recordDirectory(path: string): void {
    const within = relative(this.root, path);
    if (within.startsWith('..')) return; // outside the simulated disk
    const names: Record<string, DurableName> = {};
    for (const entry of readdirSync(path, { withFileTypes: true })) {
      if (entry.isDirectory()) names[entry.name] = { dir: true };
      else if (entry.isFile()) names[entry.name] = { file: inodeKey(lstatSync(join(path, entry.name), { bigint: true })) };
    }
    writeAtomically(listingPath(this.journal, within), new TextEncoder().encode(JSON.stringify(names)));
  }
}

type DurableName = { file: string } | { dir: true };

/** What a power cut leaves: replaces everything in `target` with the synced state in `journal`. */
export function restoreSyncedState(journal: string, target: string): void {
  for (const name of readdirSync(target)) rmSync(join(target, name), { recursive: true, force: true });
  restoreDirectory(journal, target, '');
}

function restoreDirectory(journal: string, directory: string, within: string): void {
  const listing = listingPath(journal, within);
  const names = existsSync(listing) ? (JSON.parse(readFileSync(listing, 'utf8')) as Record<string, DurableName>) : {};
  for (const [name, durable] of Object.entries(names)) {
    const path = join(directory, name);
    if ('dir' in durable) {
      mkdirSync(path);
      restoreDirectory(journal, path, join(within, name));
    } else {
      const content = join(journal, 'files', durable.file);
      writeFileSync(path, existsSync(content) ? readFileSync(content) : new Uint8Array(0));
    }
  }
}

/** An inode, told apart from a later file that reuses its number by its birth time. */
function inodeKey(stats: { ino: bigint; birthtimeNs: bigint }): string {
  return `${stats.ino}-${stats.birthtimeNs}`;
}

function listingPath(journal: string, within: string): string {
  return join(journal, 'dirs', `${encodeURIComponent(within.split(sep).join('/') || '.')}.json`);
}

/** tmp + rename: a SIGKILL leaves the old record or the new one, never half of one. */
function writeAtomically(path: string, bytes: Uint8Array): void {
  writeFileSync(`${path}.tmp`, bytes);
  renameSync(`${path}.tmp`, path);
}
