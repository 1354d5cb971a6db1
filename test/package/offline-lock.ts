import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/** The public registry's tarball URL: only a cache key here, never fetched (npm runs with --offline). */
const REGISTRY_URL = 'https://registry.npmjs.org';

interface LockEntry {
  readonly version: string;
  readonly name?: string;
  readonly dev?: boolean;
  readonly [field: string]: unknown;
}

interface PackageJson {
  readonly version: string;
  readonly license: string;
  readonly dependencies: Record<string, string>;
  readonly bin: Record<string, string>;
  readonly engines: Record<string, string>;
}

/**
 * A package-lock.json for a fresh project that depends on the packed tarball only, pinning Ferry's
 * dependencies to the versions this repository's lockfile holds. Why: `npm install --offline
 * <tarball>` needs each dependency's registry metadata (a packument) to resolve its range, and
 * `npm ci` caches only tarballs (by integrity); with every version, integrity and tarball URL
 * already decided, `npm ci --offline` installs from the cache without a request.
 */
export function offlineLockFor(repository: string, appName: string, tarballSpec: string): object {
  const lock = JSON.parse(readFileSync(join(repository, 'package-lock.json'), 'utf8')) as { packages: Record<string, LockEntry> };
  const ferry = JSON.parse(readFileSync(join(repository, 'package.json'), 'utf8')) as PackageJson;
  const packages: Record<string, object> = {
    '': { name: appName, dependencies: { ferry: tarballSpec } },
    'node_modules/ferry': { version: ferry.version, resolved: tarballSpec, license: ferry.license, dependencies: ferry.dependencies, bin: ferry.bin, engines: ferry.engines },
  };
  for (const [path, entry] of Object.entries(lock.packages)) {
    if (path === '' || entry.dev === true) continue; // the root, and what only Ferry's own tests use
    packages[path] = { ...entry, resolved: registryTarball(entry.name ?? path.slice(path.lastIndexOf('node_modules/') + 'node_modules/'.length), entry.version) };
  }
  return { name: appName, lockfileVersion: 3, requires: true, packages };
}

/** npm's tarball URL of a package version: `<registry>/<name>/-/<name without scope>-<version>.tgz`. */
function registryTarball(name: string, version: string): string {
  return `${REGISTRY_URL}/${name}/-/${name.slice(name.lastIndexOf('/') + 1)}-${version}.tgz`;
}
