import { FerryError } from '../errors.ts';
import { isStoreError } from '../store/errors.ts';
import type { Authorship, ObjectStore } from '../store/object-store.ts';
import { type Random, systemRandom } from '../util/random.ts';
import { regressed } from '../util/regressions.ts';
import { randomUuid } from '../util/uuid.ts';
import { authorshipOf, type ControlRecordAuthor, decodeControlRecord, drawAuthor, encodeControlRecord } from './control-record.ts';

/** A control record as read: its value and the ETag that a compare-and-swap must name. */
export interface Versioned<T> {
  readonly value: T;
  readonly etag: string;
}

/** Who writes through a ControlStore: where its nonces come from, and its incarnation. */
export interface ControlWriter {
  /** Draws each write's nonce (and the incarnation when none is given); the operating system's randomness by default. A simulation passes its seeded one. */
  readonly random?: Random;
  /** The writing process's incarnation, when the caller has one; default: one drawn for this ControlStore. */
  readonly incarnation?: string;
}

/**
 * Small JSON control records (brokers, topics, partition leadership, group offsets) in an object
 * store, changed only by compare-and-swap (docs/design.md contract 5): `create` is put-if-absent,
 * `replace` is If-Match on the ETag that was read. A lost race is a `null` result, never an
 * overwrite. The records may live in another bucket than the WAL data (a regional one).
 *
 * [CW1] (docs/design.md contract 15) Every write stores its value in an envelope with a nonce drawn for
 * that write and this writer's incarnation (control-record.ts), and a conditional write carries
 * the nonce as its authorship: a backend that reads the key back after an ambiguous answer takes
 * the record there for this write's only if it bears the nonce, never because its value is the
 * same. Readers see the value alone. (Unique bytes per write also keep ETags, which S3 derives from
 * the content, from coming back: a record changed and changed back is a new version.)
 */
export class ControlStore {
  readonly #store: ObjectStore;
  readonly #prefix: string;
  readonly #random: Random;
  /** Drawn at the first write when not given: a ControlStore that only reads draws nothing. */
  #incarnation: string | null;

  readonly #givenPrefix: string;

  constructor(store: ObjectStore, prefix: string, writer: ControlWriter = {}) {
    this.#store = store;
    this.#givenPrefix = prefix;
    this.#prefix = prefix === '' ? 'control/' : `${prefix.replace(/\/+$/, '')}/control/`;
    this.#random = writer.random ?? systemRandom;
    this.#incarnation = writer.incarnation ?? null;
  }

  /**
   * The same records through `view` of this store (a measured one: src/broker/store-metrics.ts),
   * with the same writer: its randomness, and its incarnation once it has one. Use it instead of
   * this one from then on: an incarnation not yet drawn is drawn by whichever writes first.
   */
  through(view: (store: ObjectStore) => ObjectStore): ControlStore {
    return new ControlStore(view(this.#store), this.#givenPrefix, { random: this.#random, ...(this.#incarnation === null ? {} : { incarnation: this.#incarnation }) });
  }

  async read<T>(key: string): Promise<Versioned<T> | null> {
    try {
      const { body, etag } = await this.#store.get(this.#prefix + key);
      return { value: decodeControlRecord<T>(body).value, etag };
    } catch (error) {
      if (isStoreError(error, 'NotFound')) return null;
      throw error;
    }
  }

  /** Creates the record if absent; null if it exists. */
  async create<T>(key: string, value: T): Promise<Versioned<T> | null> {
    return this.#conditional(key, value, { ifNoneMatch: '*' });
  }

  /** Replaces the record if it is still the version read; null if someone changed it first. */
  async replace<T>(key: string, previous: Versioned<T>, value: T): Promise<Versioned<T> | null> {
    return this.#conditional(key, value, { ifMatch: previous.etag });
  }

  /** Writes a record without a condition (taking it over whoever wrote it last); returns its ETag. */
  async put<T>(key: string, value: T): Promise<string> {
    return (await this.#store.put(this.#prefix + key, encodeControlRecord(value, this.#author()))).etag;
  }

  /** The keys under `prefix` (relative to the control root), in no particular order. */
  async list(prefix: string): Promise<string[]> {
    return [...(await this.listVersions(prefix)).keys()];
  }

  /** Every record under `prefix` with its ETag (relative keys, no particular order). */
  async listVersions(prefix: string): Promise<Map<string, string>> {
    const versions = new Map<string, string>();
    let token: string | undefined;
    do {
      const page = await this.#store.list(this.#prefix + prefix, token === undefined ? {} : { token });
      for (const object of page.objects) versions.set(object.key.slice(this.#prefix.length), object.etag);
      token = page.nextToken;
    } while (token !== undefined);
    return versions;
  }

  async delete(key: string): Promise<void> {
    await this.#store.delete(this.#prefix + key);
  }

  async #conditional<T>(key: string, value: T, condition: { ifNoneMatch?: '*'; ifMatch?: string }): Promise<Versioned<T> | null> {
    const author = this.#author();
    try {
      const { etag } = await this.#store.put(this.#prefix + key, encodeControlRecord(value, author), { ...condition, authorship: authorshipFor(author, value) });
      return { value, etag };
    } catch (error) {
      if (isStoreError(error, 'PreconditionFailed') || isStoreError(error, 'Conflict')) return null;
      if (isStoreError(error)) throw new FerryError('Storage', `control record ${key}: ${error.message}`, { cause: error });
      throw error;
    }
  }

  /** [CW1] A fresh nonce for each write: two writes of one writer are told apart too (a retry after a lost race). */
  #author(): ControlRecordAuthor {
    this.#incarnation ??= randomUuid(this.#random);
    return drawAuthor(this.#random, this.#incarnation);
  }
}

/** [CW1] The write's nonce; with the judge-by-bytes bug switched back on, a record with the same value (whoever wrote it). */
function authorshipFor(author: ControlRecordAuthor, value: unknown): Authorship {
  if (!regressed('judge-by-bytes')) return authorshipOf(author);
  const valueText = JSON.stringify(value);
  return { wrote: (body) => sameValue(body, valueText) };
}

function sameValue(body: Uint8Array, valueText: string): boolean {
  try {
    return JSON.stringify(decodeControlRecord(body).value) === valueText;
  } catch {
    return false;
  }
}

/**
 * The records under a prefix, kept current with one LIST per refresh: only records whose ETag
 * changed are read again (a scan of 1,000 quiet partitions costs one request, not 1,000 GETs).
 */
export class RecordCache<T> {
  readonly #control: ControlStore;
  readonly #prefix: string;
  readonly #records = new Map<string, Versioned<T>>();

  constructor(control: ControlStore, prefix: string) {
    this.#control = control;
    this.#prefix = prefix;
  }

  /**
   * Re-lists the prefix and returns every record, keyed by the part of its key after the prefix.
   * A record that cannot be read fails the refresh, unless `unreadable` is given: then it is told
   * there and left out (as if absent), and the rest are returned.
   */
  async refresh(unreadable?: (key: string, error: unknown) => void): Promise<ReadonlyMap<string, Versioned<T>>> {
    const versions = await this.#control.listVersions(this.#prefix);
    for (const key of this.#records.keys()) if (!versions.has(this.#prefix + key)) this.#records.delete(key);
    await Promise.all(
      [...versions].map(async ([fullKey, etag]) => {
        const key = fullKey.slice(this.#prefix.length);
        if (this.#records.get(key)?.etag === etag) return;
        let read: Versioned<T> | null;
        try {
          read = await this.#control.read<T>(fullKey);
        } catch (error) {
          if (unreadable === undefined) throw error;
          this.#records.delete(key);
          unreadable(key, error);
          return;
        }
        if (read === null) this.#records.delete(key);
        else this.#records.set(key, read);
      }),
    );
    return this.#records;
  }

  /** Notes a record this process just wrote (its compare-and-swap returned the new version). */
  note(key: string, record: Versioned<T> | null): void {
    if (record === null) this.#records.delete(key);
    else this.#records.set(key, record);
  }
}
