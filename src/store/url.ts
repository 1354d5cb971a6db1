import type { Logger } from '../observability/logger.ts';
import { resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Clock } from '../util/clock.ts';
import { SeededRandom } from '../util/random.ts';
import { urlWithoutSecrets } from '../util/url-secrets.ts';
import { StoreError } from './errors.ts';
import { FileStore } from './file.ts';
import { LATENCY_PROFILES, type LatencyProfileName } from './latency.ts';
import { MemoryStore } from './memory.ts';
import type { ObjectStore } from './object-store.ts';

/** What openStore passes to the store it opens. */
export interface OpenStoreOptions {
  /** The memory store's latencies and the S3 store's backoff run on this clock. */
  readonly clock?: Clock;
  /** Seeds the memory store (unless the URL sets `seed`) and the S3 store's retry jitter. */
  readonly seed?: number;
  /** The S3 store says here which requests failed after all their retries. */
  readonly logger?: Logger;
}

/**
 * Opens the object store a URL names:
 * - `file:///absolute/path`, `file:relative/path`: the file store, created if missing;
 * - `memory://?latency=s3-express&seed=7`: a memory store (faults off), latency `zero` by default;
 * - `s3://bucket/prefix?region=...`: the S3 store (parameters in s3-config.ts).
 * Anything else is InvalidArgument quoting the URL and saying what is wrong with it.
 */
export async function openStore(url: string, options: OpenStoreOptions = {}): Promise<ObjectStore> {
  const scheme = /^([a-zA-Z][a-zA-Z0-9+.-]*):/.exec(url)?.[1]?.toLowerCase();
  switch (scheme) {
    case 'file':
      return FileStore.open(filePath(url));
    case 'memory':
      return openMemory(url, options);
    case 's3': {
      const { S3Store } = await import('./s3.ts');
      return S3Store.fromUrl(parse(url), process.env, {
        ...(options.clock === undefined ? {} : { clock: options.clock }),
        ...(options.seed === undefined ? {} : { random: new SeededRandom(options.seed) }),
        ...(options.logger === undefined ? {} : { logger: options.logger }),
      });
    }
    case undefined:
      throw invalid(url, 'it has no scheme; expected file:, memory: or s3:');
    default:
      throw invalid(url, `unknown scheme ${scheme}:; expected file:, memory: or s3:`);
  }
}

function invalid(url: string, problem: string): StoreError {
  return new StoreError('InvalidArgument', `object store URL ${JSON.stringify(urlWithoutSecrets(url))}: ${problem}`);
}

function parse(url: string): URL {
  try {
    return new URL(url);
  } catch (error) {
    throw new StoreError('InvalidArgument', `object store URL ${JSON.stringify(urlWithoutSecrets(url))}: malformed (${error instanceof Error ? error.message : String(error)})`, { cause: error });
  }
}

/** The directory a `file:` store URL names (absolute or relative to the working directory); null for another scheme. */
export function fileStoreDirectory(url: string): string | null {
  return url.startsWith('file:') ? filePath(url) : null;
}

/** `file:///abs` and `file://localhost/abs` the standard way; `file:rel` relative to the working directory. */
function filePath(url: string): string {
  const rest = url.slice('file:'.length);
  if (rest.includes('?') || rest.includes('#')) throw invalid(url, 'a file URL takes no query or fragment');
  if (rest.startsWith('//')) {
    const parsed = parse(url);
    if (parsed.host !== '' && parsed.host !== 'localhost') throw invalid(url, `host ${parsed.host} is not this machine; write file:///path`);
    if (parsed.pathname === '/' || parsed.pathname === '') throw invalid(url, 'it names no directory (the root itself is refused)');
    return fileURLToPath(parsed);
  }
  if (rest === '') throw invalid(url, 'it names no directory');
  let decoded: string;
  try {
    decoded = decodeURIComponent(rest);
  } catch {
    throw invalid(url, 'its path has a malformed %-escape');
  }
  return resolve(decoded);
}

const MEMORY_PARAMETERS = new Set(['latency', 'seed']);

function openMemory(url: string, options: OpenStoreOptions): MemoryStore {
  const parsed = parse(url);
  if (parsed.host !== '' || (parsed.pathname !== '' && parsed.pathname !== '/')) throw invalid(url, 'a memory URL takes no host or path: memory://?latency=...&seed=...');
  for (const name of parsed.searchParams.keys()) if (!MEMORY_PARAMETERS.has(name)) throw invalid(url, `unknown parameter ${name}; memory URLs take ${[...MEMORY_PARAMETERS].join(' and ')}`);
  const latency = parsed.searchParams.get('latency') ?? 'zero';
  if (!(latency in LATENCY_PROFILES)) throw invalid(url, `unknown latency profile ${JSON.stringify(latency)}; known: ${Object.keys(LATENCY_PROFILES).join(', ')}`);
  const seedText = parsed.searchParams.get('seed');
  const seed = seedText === null ? options.seed : Number(seedText);
  if (seed !== undefined && !(Number.isSafeInteger(seed) && seed >= 0 && seed <= 0xffff_ffff)) throw invalid(url, `seed must be an integer in 0..4294967295, not ${JSON.stringify(seedText)}`);
  return new MemoryStore({ latency: latency as LatencyProfileName, ...(seed === undefined ? {} : { seed }), ...(options.clock === undefined ? {} : { clock: options.clock }) });
}
