import { readFileSync, statSync, type Stats } from 'node:fs';
import { readFile, stat } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { createLocalJWKSet, type JSONWebKeySet, type JWTVerifyGetKey } from 'jose';
import type { Clock } from '../../util/clock.ts';

/**
 * The JWKS file of KIP-768's `sasl.oauthbearer.jwks.endpoint.url` (Kafka's
 * JwksFileVerificationKeyResolver, with the reload of Kafka 4.1's CachedFile.lastModifiedPolicy):
 * the keys are read when the broker starts, and read again when the file changed, looked at on a
 * validation at most once per JWKS_FILE_CHECK_INTERVAL_MS, or at once on reload(). A new file that
 * cannot be read or parsed leaves the keys as they were and is tried again at the next check (a file
 * being rewritten in place is seen half written); the failure goes to `log`.
 */

/** The largest JWKS file read: real ones hold a few keys (~1-2 KiB each); the read costs this much memory. */
export const JWKS_FILE_SIZE_MAX_BYTES = 1024 * 1024;
/** Most keys in one JWKS: a validation scans them all for the `kid`. */
export const JWKS_KEY_COUNT_MAX = 1000;
/**
 * How often a validation looks at the file's mtime: one stat per interval whatever the number of
 * authentications; a rotated key is accepted at most this long after the file changed.
 */
export const JWKS_FILE_CHECK_INTERVAL_MS = 5_000;

/** A JWKS endpoint Ferry cannot use: the broker must not start with it (Kafka's ConfigException). */
export class JwksConfigError extends Error {
  override name = 'JwksConfigError';
}

/** `file:///etc/ferry/jwks.json` or a plain path; Kafka's https: endpoints are not supported. */
export function jwksFilePath(endpointUrl: string): string {
  if (endpointUrl.startsWith('file:')) {
    try {
      return fileURLToPath(endpointUrl);
    } catch (error) {
      throw new JwksConfigError(`sasl.oauthbearer.jwks.endpoint.url ${endpointUrl} is not a file URL: ${(error as Error).message}`);
    }
  }
  if (/^[a-z][a-z0-9+.-]*:\/\//i.test(endpointUrl)) {
    throw new JwksConfigError(`sasl.oauthbearer.jwks.endpoint.url ${endpointUrl}: only a file: URL or a path is supported`);
  }
  if (endpointUrl === '') throw new JwksConfigError('sasl.oauthbearer.jwks.endpoint.url is empty');
  return endpointUrl;
}

/** What says the file changed: a rewrite in place moves mtime or size, a rename moves the inode. */
interface FileVersion {
  readonly mtimeMs: number;
  readonly size: number;
  readonly ino: number;
}

function versionOf(stats: Stats): FileVersion {
  return { mtimeMs: stats.mtimeMs, size: stats.size, ino: stats.ino };
}

function sameVersion(a: FileVersion, b: FileVersion): boolean {
  return a.mtimeMs === b.mtimeMs && a.size === b.size && a.ino === b.ino;
}

/** Parses a JWKS document; a JwksConfigError says why it is not one. */
export function parseJwks(text: string, path: string): JWTVerifyGetKey {
  let document: unknown;
  try {
    document = JSON.parse(text);
  } catch (error) {
    throw new JwksConfigError(`JWKS file ${path} is not JSON: ${(error as Error).message}`);
  }
  const keys = (document as { keys?: unknown } | null)?.keys;
  if (!Array.isArray(keys)) throw new JwksConfigError(`JWKS file ${path} has no "keys" array`);
  if (keys.length > JWKS_KEY_COUNT_MAX) throw new JwksConfigError(`JWKS file ${path} has ${keys.length} keys, more than ${JWKS_KEY_COUNT_MAX}`);
  try {
    return createLocalJWKSet(document as JSONWebKeySet);
  } catch (error) {
    throw new JwksConfigError(`JWKS file ${path} is not a JSON Web Key Set: ${(error as Error).message}`);
  }
}

export class JwksFileKeySet {
  readonly #path: string;
  readonly #clock: Clock;
  readonly #log: (message: string) => void;
  #keys: JWTVerifyGetKey;
  #version: FileVersion;
  #checkedAtMs: number;
  #pending: Promise<void> | null = null;

  /** Reads the file now (synchronously, at startup); a JwksConfigError if it is missing or not a JWKS. */
  constructor(endpointUrl: string, clock: Clock, log: (message: string) => void = () => {}) {
    this.#path = jwksFilePath(endpointUrl);
    this.#clock = clock;
    this.#log = log;
    let stats: Stats;
    let text: string;
    try {
      stats = statSync(this.#path);
      if (stats.size > JWKS_FILE_SIZE_MAX_BYTES) throw new JwksConfigError(`JWKS file ${this.#path} is ${stats.size} bytes, more than ${JWKS_FILE_SIZE_MAX_BYTES}`);
      text = readFileSync(this.#path, 'utf8');
    } catch (error) {
      if (error instanceof JwksConfigError) throw error;
      throw new JwksConfigError(`JWKS file ${this.#path} cannot be read: ${(error as Error).message}`);
    }
    this.#keys = parseJwks(text, this.#path);
    this.#version = versionOf(stats);
    this.#checkedAtMs = clock.monotonicMs();
  }

  get path(): string {
    return this.#path;
  }

  /** The key resolver for jose, after a look at the file if the last one is older than the interval. */
  async resolver(): Promise<JWTVerifyGetKey> {
    if (this.#clock.monotonicMs() - this.#checkedAtMs >= JWKS_FILE_CHECK_INTERVAL_MS) await this.#refresh(false);
    return this.#keys;
  }

  /** Reads the file again now, changed or not. Resolves when done; a bad file is logged, not thrown. */
  reload(): Promise<void> {
    return this.#refresh(true);
  }

  /** One read at a time: the validations that arrive meanwhile wait for it. */
  #refresh(force: boolean): Promise<void> {
    if (this.#pending !== null) return force ? this.#pending.then(() => this.#refresh(true)) : this.#pending;
    this.#checkedAtMs = this.#clock.monotonicMs();
    this.#pending = this.#read(force).finally(() => void (this.#pending = null));
    return this.#pending;
  }

  async #read(force: boolean): Promise<void> {
    try {
      const stats = await stat(this.#path);
      const version = versionOf(stats);
      if (!force && sameVersion(version, this.#version)) return;
      if (stats.size > JWKS_FILE_SIZE_MAX_BYTES) throw new JwksConfigError(`JWKS file ${this.#path} is ${stats.size} bytes, more than ${JWKS_FILE_SIZE_MAX_BYTES}`);
      const keys = parseJwks(await readFile(this.#path, 'utf8'), this.#path);
      this.#keys = keys;
      this.#version = version;
    } catch (error) {
      this.#log(`OAUTHBEARER: kept the previous JWKS: ${(error as Error).message}`);
    }
  }
}
