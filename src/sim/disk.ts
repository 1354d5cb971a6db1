import { posix } from 'node:path';
import { FerryError } from '../errors.ts';
import { assert } from '../util/assert.ts';
import type { Disk, OpenFlags } from '../util/disk.ts';
import type { Random } from '../util/random.ts';
import { osError, type SimErrno } from './sim-errno.ts';
import { SimFile } from './sim-file.ts';

/** The first descriptor handed out, as a process's first after stdin, stdout and stderr. */
const FIRST_DESCRIPTOR = 3;
const RESOLVED: Promise<void> = Promise.resolve();

/**
 * A directory: its live names, and those of its last fsync (`durable`; null when it was never
 * fsynced, so a power loss leaves it empty even if its parent keeps its name).
 */
class SimDirectory {
  /** Read here; changed only through `link` and `unlink`, so a sync knows whether anything changed. */
  readonly live = new Map<string, SimNode>();
  durable: Map<string, SimNode> | null = null;
  /** Changes of `live` so far, and how many `durable` holds: an fsync with nothing new keeps it (a log directory is synced at each file written in it). */
  #changes = 0;
  #durableChanges = -1;

  link(name: string, node: SimNode): void {
    this.live.set(name, node);
    this.#changes++;
  }

  unlink(name: string): void {
    if (this.live.delete(name)) this.#changes++;
  }

  /** fsync of the directory: its names as they are now survive a crash. */
  sync(): void {
    if (this.durable !== null && this.#durableChanges === this.#changes) return;
    this.durable = new Map(this.live);
    this.#durableChanges = this.#changes;
  }
}
type SimNode = SimFile | SimDirectory;

interface OpenFile {
  readonly file: SimFile;
  readonly writable: boolean;
}

export interface SimDiskOptions {
  /** Draws how much of a torn last write survives a crash. */
  readonly random: Random;
  /** Writes that would take the files past this fail with ENOSPC (default: no limit). */
  readonly capacityBytes?: number;
}

export interface SimCrashOptions {
  /**
   * Only the processes die (kill -9): the page cache survives, so nothing written is lost; fds
   * and locks are released. Default false: a power loss of the host.
   */
  readonly keepPageCache?: boolean;
}

/** One file of `SimDisk.listFiles`: its path, its length now and what a power loss would keep of it. */
export interface SimFileListing {
  readonly path: string;
  readonly sizeBytes: number;
  readonly durableBytes: number;
}

/**
 * The simulation's local disk (docs/design.md contract 8): files and directories in memory, lost at a
 * crash by the strict POSIX rules of test/support/power-loss.ts. A file keeps the bytes of its
 * last fsync/fdatasync (and perhaps a seeded prefix of its one write after it: a torn write); a
 * name created, renamed or removed survives only once its directory was fsynced after; a
 * directory never fsynced holds nothing. Deterministic: the same operations and seed leave the
 * same disk. The asynchronous barriers complete at once (the simulation's gate orders them).
 */
export class SimDisk implements Disk {
  readonly #random: Random;
  #capacityBytes: number;
  #root = rootDirectory();
  #usedBytes = 0;
  readonly #open = new Map<number, OpenFile>();
  #nextDescriptor = FIRST_DESCRIPTOR;
  /** Held directory locks: a fresh token per holder, so a stale release after a crash frees nothing. */
  readonly #locks = new Map<string, symbol>();
  #syncFailures: { code: SimErrno; remaining: number } | null = null;

  constructor(options: SimDiskOptions) {
    this.#random = options.random;
    this.#capacityBytes = options.capacityBytes ?? Number.POSITIVE_INFINITY;
  }

  // ---- the simulation's control ----

  get capacityBytes(): number {
    return this.#capacityBytes;
  }

  /** Fills the disk (below usedBytes: every growing write fails ENOSPC) or frees it (a higher capacity). */
  setCapacity(bytes: number): void {
    assert(bytes >= 0, `capacity ${bytes} is negative`);
    this.#capacityBytes = bytes;
  }

  /** Bytes held by files that have a name or an open descriptor. */
  get usedBytes(): number {
    return this.#usedBytes;
  }

  /** The next `count` file fsyncs/fdatasyncs fail with `code`, losing what they were to sync (as Linux's). */
  failNextSyncs(count = 1, code: SimErrno = 'EIO'): void {
    this.#syncFailures = count > 0 ? { code, remaining: count } : null;
  }

  /** A crash of the host: what was never synced is lost (see the class comment); every fd and lock is released. */
  crash(options: SimCrashOptions = {}): void {
    for (const { file } of this.#open.values()) file.openDescriptors = 0;
    this.#open.clear();
    this.#locks.clear();
    if (options.keepPageCache !== true) this.#root = this.#survivorOf(this.#root, new Set());
    this.#recount();
  }

  /** The disk is gone: a new, empty one in its place (a replaced machine). */
  wipe(): void {
    this.#open.clear();
    this.#locks.clear();
    this.#root = rootDirectory();
    this.#usedBytes = 0;
  }

  /** Every file reachable by name, depth first in name order (for debugging a failed seed). */
  listFiles(): SimFileListing[] {
    const listing: SimFileListing[] = [];
    const visit = (directory: SimDirectory, path: string): void => {
      for (const name of [...directory.live.keys()].sort()) {
        const node = directory.live.get(name)!;
        const at = posix.join(path, name);
        if (node instanceof SimDirectory) visit(node, at);
        else listing.push({ path: at, sizeBytes: node.length, durableBytes: node.durableLength });
      }
    };
    visit(this.#root, '/');
    return listing;
  }

  // ---- Disk ----

  openSync(path: string, flags: OpenFlags): number {
    const { parent, name } = this.#parentOf(path, 'open');
    const found = parent.live.get(name);
    if (found instanceof SimDirectory) throw osError('EISDIR', 'open', path); // directories are synced by path here
    let file: SimFile;
    if (flags === 'r' || flags === 'r+') {
      if (found === undefined) throw osError('ENOENT', 'open', path);
      file = found as SimFile;
    } else if (found !== undefined) {
      if (flags !== 'w') throw osError('EEXIST', 'open', path);
      file = found as SimFile;
      this.#resize(file, 0);
    } else {
      file = new SimFile();
      this.#link(parent, name, file);
    }
    const fd = this.#nextDescriptor++;
    file.openDescriptors++;
    this.#open.set(fd, { file, writable: flags !== 'r' });
    return fd;
  }

  closeSync(fd: number): void {
    const { file } = this.#descriptor(fd, 'close');
    this.#open.delete(fd);
    file.openDescriptors--;
    this.#releaseIfUnreferenced(file);
  }

  writeSync(fd: number, bytes: Uint8Array, offset: number, length: number, position: number): number {
    const { file } = this.#writable(fd, 'write');
    this.#reserve(file, position, length, 'write');
    file.write(bytes.subarray(offset, offset + length), position);
    return length;
  }

  writevSync(fd: number, buffers: readonly Uint8Array[], position: number): number {
    const { file } = this.#writable(fd, 'writev');
    let total = 0;
    for (const buffer of buffers) total += buffer.length;
    this.#reserve(file, position, total, 'writev');
    let at = position;
    for (const buffer of buffers) {
      file.write(buffer, at);
      at += buffer.length;
    }
    return total;
  }

  readSync(fd: number, into: Uint8Array, offset: number, length: number, position: number): number {
    return this.#descriptor(fd, 'read').file.read(into, offset, length, position);
  }

  fstatSync(fd: number): { readonly size: number } {
    return { size: this.#descriptor(fd, 'fstat').file.length };
  }

  ftruncateSync(fd: number, length: number): void {
    const { file } = this.#writable(fd, 'ftruncate');
    if (length > file.length) this.#reserve(file, file.length, length - file.length, 'ftruncate');
    this.#resize(file, length);
  }

  existsSync(path: string): boolean {
    return this.#lookup(path) !== undefined;
  }

  readFileSync(path: string): Uint8Array {
    const node = this.#lookup(path);
    if (node === undefined) throw osError('ENOENT', 'open', path);
    if (node instanceof SimDirectory) throw osError('EISDIR', 'read', path);
    return node.contents();
  }

  readdirSync(path: string): string[] {
    return [...this.#directoryAt(path, 'scandir').live.keys()];
  }

  unlinkSync(path: string): void {
    const { parent, name } = this.#parentOf(path, 'unlink');
    const node = parent.live.get(name);
    if (node === undefined) throw osError('ENOENT', 'unlink', path);
    if (node instanceof SimDirectory) throw osError('EISDIR', 'unlink', path);
    this.#unlink(parent, name);
  }

  renameSync(from: string, to: string): void {
    const source = this.#parentOf(from, 'rename');
    const node = source.parent.live.get(source.name);
    if (node === undefined) throw osError('ENOENT', 'rename', from);
    const target = this.#parentOf(to, 'rename');
    const replaced = target.parent.live.get(target.name);
    if (replaced === node) return;
    if (replaced instanceof SimDirectory) throw osError(node instanceof SimDirectory && replaced.live.size > 0 ? 'ENOTEMPTY' : 'EISDIR', 'rename', to);
    if (replaced !== undefined && node instanceof SimDirectory) throw osError('ENOTDIR', 'rename', to);
    source.parent.unlink(source.name);
    if (replaced !== undefined) this.#unlink(target.parent, target.name);
    target.parent.link(target.name, node);
  }

  mkdirSync(path: string, _options: { readonly recursive: true }): string | undefined {
    const names = componentsOf(path);
    let directory = this.#root;
    let first: string | undefined;
    for (let index = 0; index < names.length; index++) {
      const name = names[index]!;
      let next = directory.live.get(name);
      if (next === undefined) {
        next = new SimDirectory();
        directory.link(name, next);
        first ??= posix.join('/', ...names.slice(0, index + 1));
      }
      if (!(next instanceof SimDirectory)) throw osError(index === names.length - 1 ? 'EEXIST' : 'ENOTDIR', 'mkdir', path);
      directory = next;
    }
    return first;
  }

  rmSync(path: string, _options: { readonly recursive: true; readonly force: true }): void {
    const { parent, name } = this.#parentOf(path, 'rm', true);
    if (parent.live.has(name)) this.#unlink(parent, name);
  }

  lockSync(directory: string): () => void {
    const key = posix.join('/', ...componentsOf(directory));
    this.#directoryAt(directory, 'open');
    if (this.#locks.has(key)) throw new FerryError('Locked', `${directory} is in use by another Ferry log (could not lock .lock)`);
    const token = Symbol(key);
    this.#locks.set(key, token);
    return () => {
      if (this.#locks.get(key) === token) this.#locks.delete(key);
    };
  }

  syncSync(fd: number): void {
    this.#syncFile(fd, 'fsync');
  }

  sync(fd: number): Promise<void> {
    return settled(() => this.#syncFile(fd, 'fsync'));
  }

  dataSyncSync(fd: number): void {
    this.#syncFile(fd, 'fdatasync');
  }

  dataSync(fd: number): Promise<void> {
    return settled(() => this.#syncFile(fd, 'fdatasync'));
  }

  syncDirectorySync(path: string): void {
    this.#directoryAt(path, 'fsync').sync();
  }

  syncDirectory(path: string): Promise<void> {
    return settled(() => this.syncDirectorySync(path));
  }

  // ---- internals ----

  #syncFile(fd: number, syscall: string): void {
    const { file } = this.#descriptor(fd, syscall);
    const failure = this.#syncFailures;
    if (failure !== null) {
      if (--failure.remaining === 0) this.#syncFailures = null;
      file.loseUnsynced();
      throw osError(failure.code, syscall);
    }
    file.sync();
  }

  #descriptor(fd: number, syscall: string): OpenFile {
    const open = this.#open.get(fd);
    if (open === undefined) throw osError('EBADF', syscall);
    return open;
  }

  #writable(fd: number, syscall: string): OpenFile {
    const open = this.#descriptor(fd, syscall);
    if (!open.writable) throw osError('EBADF', syscall);
    return open;
  }

  /** Fails with ENOSPC when growing `file` by this write would pass the capacity; nothing is written then. */
  #reserve(file: SimFile, position: number, length: number, syscall: string): void {
    const growth = file.growthOf(position, length);
    if (growth > 0 && this.#usedBytes + growth > this.#capacityBytes) throw osError('ENOSPC', syscall);
    this.#usedBytes += growth;
  }

  #resize(file: SimFile, length: number): void {
    this.#usedBytes += length - file.length;
    file.truncate(length);
  }

  #link(parent: SimDirectory, name: string, node: SimNode): void {
    parent.link(name, node);
    if (node instanceof SimFile) node.links++;
  }

  /** Removes a name; a file's space is freed once no name and no descriptor holds it; a directory goes with its tree. */
  #unlink(parent: SimDirectory, name: string): void {
    const node = parent.live.get(name)!;
    parent.unlink(name);
    if (node instanceof SimFile) {
      node.links--;
      this.#releaseIfUnreferenced(node);
      return;
    }
    for (const child of [...node.live.keys()]) this.#unlink(node, child);
  }

  #releaseIfUnreferenced(file: SimFile): void {
    if (file.links === 0 && file.openDescriptors === 0) this.#usedBytes -= file.length;
  }

  /** What a power loss leaves of `directory`: its durable names, each file cut to its durable bytes. */
  #survivorOf(directory: SimDirectory, crashed: Set<SimFile>): SimDirectory {
    const survivor = new SimDirectory();
    for (const [name, node] of directory.durable ?? []) {
      if (node instanceof SimDirectory) {
        survivor.link(name, this.#survivorOf(node, crashed));
      } else {
        // A file with two durable names is cut once.
        if (!crashed.has(node)) node.crash((length) => Math.floor(this.#random.next() * (length + 1)));
        crashed.add(node);
        survivor.link(name, node);
      }
    }
    survivor.sync();
    return survivor;
  }

  /** Links and used bytes from the tree (after a crash rebuilt it). */
  #recount(): void {
    const files = new Set<SimFile>();
    const visit = (directory: SimDirectory): void => {
      for (const node of directory.live.values()) {
        if (node instanceof SimDirectory) visit(node);
        else {
          if (!files.has(node)) node.links = 0;
          files.add(node);
          node.links++;
        }
      }
    };
    visit(this.#root);
    this.#usedBytes = 0;
    for (const file of files) this.#usedBytes += file.length;
  }

  #lookup(path: string): SimNode | undefined {
    return this.#walk(componentsOf(path));
  }

  /** The node at the end of `names` from the root, if every step exists. */
  #walk(names: readonly string[]): SimNode | undefined {
    let node: SimNode = this.#root;
    for (const name of names) {
      if (!(node instanceof SimDirectory)) return undefined;
      const next: SimNode | undefined = node.live.get(name);
      if (next === undefined) return undefined;
      node = next;
    }
    return node;
  }

  #directoryAt(path: string, syscall: string): SimDirectory {
    const node = this.#lookup(path);
    if (node === undefined) throw osError('ENOENT', syscall, path);
    if (!(node instanceof SimDirectory)) throw osError('ENOTDIR', syscall, path);
    return node;
  }

  /** The directory holding `path`'s last component, which must exist (unless `missingOk`: then a detached one). */
  #parentOf(path: string, syscall: string, missingOk = false): { parent: SimDirectory; name: string } {
    const names = componentsOf(path);
    const name = names.pop();
    if (name === undefined) throw osError('EISDIR', syscall, path);
    const parent = this.#walk(names);
    if (parent instanceof SimDirectory) return { parent, name };
    if (missingOk) return { parent: new SimDirectory(), name };
    throw osError(parent === undefined ? 'ENOENT' : 'ENOTDIR', syscall, path);
  }
}

function rootDirectory(): SimDirectory {
  const root = new SimDirectory();
  root.sync(); // the root always exists
  return root;
}

/** Paths whose names are remembered at most (a broker touches a few hundred); past it the memo starts over. */
const REMEMBERED_PATHS_MAX = 10_000;
/** Each path's names: every file operation splits its path, and posix.normalize was 1% of a run. */
const rememberedComponents = new Map<string, readonly string[]>();

/** `path`'s names from the root ('/a/b/../c' is a, c); relative paths count from the root. A fresh array: callers may change it. */
function componentsOf(path: string): string[] {
  let names = rememberedComponents.get(path);
  if (names === undefined) {
    if (rememberedComponents.size >= REMEMBERED_PATHS_MAX) rememberedComponents.clear();
    names = posix
      .normalize(`/${path}`)
      .split('/')
      .filter((name) => name.length > 0);
    rememberedComponents.set(path, names);
  }
  return [...names];
}

/** The outcome of a synchronous step as a promise: a failure rejects instead of throwing. */
function settled(step: () => void): Promise<void> {
  try {
    step();
  } catch (error) {
    return Promise.reject(error);
  }
  return RESOLVED;
}
