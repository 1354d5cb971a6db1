import { readdir } from 'node:fs/promises';
import { join } from 'node:path';
import { decodeName, directoryPathOf } from './file-keys.ts';
import { errnoOf } from './fs-errors.ts';

/**
 * Every key under `prefix` that sorts after `afterKey`, found by walking the file store's
 * objects directory from the prefix's deepest directory down (file-keys.ts has the layout).
 * Subtrees whose keys all sort at or before `afterKey` are skipped: every key below a directory
 * `d/` starts with `d/`, so if `d/` < afterKey and afterKey does not start with `d/`, they differ
 * first inside `d/`, where the keys are smaller. The keys come back unsorted.
 */
export async function walkKeys(objectsDirectory: string, prefix: string, afterKey: string | undefined): Promise<string[]> {
  const baseKey = prefix.slice(0, prefix.lastIndexOf('/') + 1);
  const baseDirectory = directoryPathOf(baseKey);
  if (baseDirectory === null) return [];
  const keys: string[] = [];
  const stack = [{ directory: join(objectsDirectory, baseDirectory), keyPrefix: baseKey }];
  while (stack.length > 0) {
    const { directory, keyPrefix } = stack.pop()!;
    let names: string[];
    try {
      names = await readdir(directory);
    } catch (error) {
      if (errnoOf(error) === 'ENOENT' || errnoOf(error) === 'ENOTDIR') continue; // deleted meanwhile, or never there
      throw error;
    }
    for (const name of names) {
      const decoded = decodeName(name);
      if (decoded === null) continue; // not written by the store
      const key = keyPrefix + decoded.segment;
      if (!decoded.isDirectory) {
        if (key.startsWith(prefix) && (afterKey === undefined || key > afterKey)) keys.push(key);
        continue;
      }
      const below = `${key}/`;
      if (!below.startsWith(prefix) && !prefix.startsWith(below)) continue;
      if (afterKey !== undefined && below < afterKey && !afterKey.startsWith(below)) continue;
      stack.push({ directory: join(directory, name), keyPrefix: below });
    }
  }
  return keys;
}
