/**
 * Preloaded into a `ferry broker` a bench starts (`bun --preload this src/cli.ts broker ...`): the
 * broker exposes no store request counts, so this records every FileStore the process opens and
 * writes each one's own request tally (FileStore.stats()) to the file FERRY_BENCH_STORE_CENSUS
 * names, every CENSUS_INTERVAL_MS and at exit. The broker's code is unchanged: the census only
 * reads what the store already counts. Stores are keyed by their root directory, so a bench that
 * gives the cluster store a directory of its own reads the control-store requests apart.
 */
import { renameSync, writeFileSync } from 'node:fs';
import { FileStore } from '../../src/store/file.ts';
import type { StoreStats } from '../../src/store/stats.ts';

/** Often enough that a minute's window misses little; the file states when it was written. */
const CENSUS_INTERVAL_MS = 500;
const CENSUS_ENVIRONMENT_VARIABLE = 'FERRY_BENCH_STORE_CENSUS';

/** What the census file holds: when it was written (wall clock ms) and each opened store's tally. */
export interface StoreCensus {
  readonly writtenAtMs: number;
  readonly stores: readonly { readonly root: string; readonly stats: StoreStats }[];
}

const target = process.env[CENSUS_ENVIRONMENT_VARIABLE];
if (target !== undefined && target !== '') {
  const opened: FileStore[] = [];
  const open = FileStore.open.bind(FileStore);
  FileStore.open = async (...args: Parameters<typeof FileStore.open>): Promise<FileStore> => {
    const store = await open(...args);
    opened.push(store);
    return store;
  };
  const write = (): void => {
    const census: StoreCensus = { writtenAtMs: Date.now(), stores: opened.map((store) => ({ root: store.root, stats: store.stats() })) };
    // Renamed into place so a reader never sees half a file.
    writeFileSync(`${target}.tmp`, JSON.stringify(census));
    renameSync(`${target}.tmp`, target);
  };
  setInterval(write, CENSUS_INTERVAL_MS).unref();
  process.on('exit', write);
}
