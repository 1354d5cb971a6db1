import { type ControlStore, RecordCache, type Versioned } from '../../control/control-store.ts';
import { FerryError } from '../../errors.ts';
import { AssertionError } from '../../util/assert.ts';
import { mapLimited } from '../../util/map-limited.ts';
import type { ResourceAcls } from './acl-index.ts';
import { ACL_RECORDS_PREFIX, type AclRecord, aclRecordKey, decodeAclRecord, encodeAclRecord, recordKeyError } from './acl-record.ts';
import type { Authorizer } from './authorizer.ts';
import { filterMatches } from './filter.ts';
import { type AccessControlEntry, type AclBinding, type AclBindingFilter, patternText, type ResourcePattern, sameEntry } from './model.ts';
import { filterError, newAclError } from './validate.ts';

/**
 * Compare-and-swap attempts on one record before a change gives up. Each costs a GET and a PUT;
 * only brokers changing ACLs of the same resource pattern at the same moment race.
 */
export const ACL_CAS_ATTEMPTS_MAX = 10;
/** Records written at once by one CreateAcls or DeleteAcls (each write is a GET and a PUT). */
export const ACL_WRITES_CONCURRENCY_MAX = 8;
/** How often a broker should call refresh(): one LIST each time, plus a GET per changed record. */
export const ACL_REFRESH_INTERVAL_MS_DEFAULT = 1_000;

/** Why one ACL change failed: a request Kafka refuses (INVALID_REQUEST) or a store failure (REQUEST_TIMED_OUT: it may still have happened). */
export interface AclError {
  readonly kind: 'InvalidRequest' | 'Storage';
  readonly message: string;
}

/** Kafka's AclCreateResult: null error is success (also for an ACL that already existed). */
export interface AclCreateResult {
  readonly error: AclError | null;
}

/** Kafka's AclBindingDeleteResult: one ACL a filter matched, and whether its deletion failed. */
export interface AclDeletion {
  readonly binding: AclBinding;
  readonly error: AclError | null;
}

/** Kafka's AclDeleteResult: an error for the filter itself, else every ACL it matched. */
export interface AclDeleteResult {
  readonly error: AclError | null;
  readonly deletions: readonly AclDeletion[];
}

/** What the ACL API handlers need: the decisions, the listing, and the changes. */
export interface AclService {
  readonly authorizer: Authorizer;
  acls(filter: AclBindingFilter): AclBinding[];
  create(bindings: readonly AclBinding[]): Promise<AclCreateResult[]>;
  delete(filters: readonly AclBindingFilter[]): Promise<AclDeleteResult[]>;
}

/** A record's ACLs as last read or written, with the ETag they came with. */
interface KnownRecord {
  readonly etag: string;
  readonly resource: ResourceAcls;
}

/**
 * The cluster's ACLs in the control metadata (acl-record.ts: one record per resource pattern),
 * feeding an Authorizer. Every change is a compare-and-swap on the record's ETag, retried on a
 * lost race with a fresh read, so brokers changing the same resource at once both land.
 * `refresh()` (one LIST, a GET per changed record) brings in other brokers' changes; this
 * process's own changes reach its authorizer as soon as their write succeeds. Refreshes and
 * changes run one at a time, so a refresh that listed before a write cannot undo it.
 */
export class AclStore implements AclService {
  readonly authorizer: Authorizer;
  readonly #control: ControlStore;
  readonly #cache: RecordCache<AclRecord>;
  /** The records as the authorizer holds them, by key under ACL_RECORDS_PREFIX. */
  readonly #known = new Map<string, KnownRecord>();
  #records: ReadonlyMap<string, Versioned<AclRecord>> = new Map();
  #queue: Promise<unknown> = Promise.resolve();

  constructor(control: ControlStore, authorizer: Authorizer) {
    this.authorizer = authorizer;
    this.#control = control;
    this.#cache = new RecordCache<AclRecord>(control, ACL_RECORDS_PREFIX);
  }

  /**
   * Reads the changes since the last refresh into the authorizer (the first one loads every ACL
   * and makes it ready). Throws if the store or a record cannot be read: the authorizer keeps
   * the last complete view, never a partial one that could be missing a DENY.
   */
  refresh(): Promise<void> {
    return this.#serialized(() => this.#refresh());
  }

  acls(filter: AclBindingFilter): AclBinding[] {
    return this.authorizer.acls(filter);
  }

  /** Adds ACLs, one result per binding in order. An ACL that exists already is a success with no write. */
  create(bindings: readonly AclBinding[]): Promise<AclCreateResult[]> {
    return this.#serialized(() => this.#create(bindings));
  }

  /**
   * Removes every ACL each filter matches (after a refresh, so that it sees other brokers' recent
   * ACLs), one result per filter in order, listing the ACLs it matched. An ACL two filters match
   * is listed by both, as in Kafka.
   */
  delete(filters: readonly AclBindingFilter[]): Promise<AclDeleteResult[]> {
    return this.#serialized(() => this.#delete(filters));
  }

  async #refresh(): Promise<void> {
    const records = await this.#cache.refresh();
    this.#records = records;
    const changed: [string, KnownRecord][] = [];
    for (const [key, record] of records) {
      if (this.#known.get(key)?.etag !== record.etag) changed.push([key, { etag: record.etag, resource: decodeAclRecord(key, record.value) }]);
    }
    const removed = [...this.#known.keys()].filter((key) => !records.has(key));
    for (const key of removed) {
      this.authorizer.setResource(this.#known.get(key)!.resource.pattern, []);
      this.#known.delete(key);
    }
    for (const [key, known] of changed) this.#note(key, known);
    if (!this.authorizer.ready) this.authorizer.load([...this.#known.values()].map((known) => known.resource));
  }

  async #create(bindings: readonly AclBinding[]): Promise<AclCreateResult[]> {
    const results = new Array<AclCreateResult>(bindings.length);
    const groups = new Map<string, { pattern: ResourcePattern; indexes: number[] }>();
    bindings.forEach((binding, index) => {
      const invalid = newAclError(binding) ?? recordKeyError(binding.pattern);
      if (invalid !== null) return void (results[index] = { error: { kind: 'InvalidRequest', message: invalid } });
      const key = aclRecordKey(binding.pattern);
      const group = groups.get(key) ?? { pattern: binding.pattern, indexes: [] };
      group.indexes.push(index);
      groups.set(key, group);
    });
    await mapLimited([...groups], ACL_WRITES_CONCURRENCY_MAX, async ([key, { pattern, indexes }]) => {
      const entries = indexes.map((index) => bindings[index]!.entry);
      const error = await this.#change(key, pattern, (before) => withAdded(before, entries)).then(() => null, storageError);
      for (const index of indexes) results[index] = { error };
    });
    return results;
  }

  async #delete(filters: readonly AclBindingFilter[]): Promise<AclDeleteResult[]> {
    const results = new Array<AclDeleteResult>(filters.length);
    const valid = filters.filter((filter, index) => {
      const invalid = filterError(filter);
      if (invalid !== null) results[index] = { error: { kind: 'InvalidRequest', message: invalid }, deletions: [] };
      return invalid === null;
    });
    const refreshed = await this.#refresh().then(() => null, storageError);
    const candidates = [...this.#known].filter(([, { resource }]) => valid.some((filter) => resource.entries.some((entry) => filterMatches(filter, { pattern: resource.pattern, entry }))));
    const outcomes = await mapLimited(refreshed === null ? candidates : [], ACL_WRITES_CONCURRENCY_MAX, async ([key, known]) => {
      const { pattern } = known.resource;
      const matches = (entry: AccessControlEntry): boolean => valid.some((filter) => filterMatches(filter, { pattern, entry }));
      const remove = (before: readonly AccessControlEntry[]): AccessControlEntry[] | null => (before.some(matches) ? before.filter((entry) => !matches(entry)) : null);
      // On a failure, the ACLs it matched as last known are the ones whose deletion failed.
      return this.#change(key, pattern, remove).then(
        (before) => ({ pattern, entries: before.filter(matches), error: null }),
        (error: unknown) => ({ pattern, entries: known.resource.entries.filter(matches), error: storageError(error) }),
      );
    });
    filters.forEach((filter, index) => {
      if (results[index] !== undefined) return;
      if (refreshed !== null) return void (results[index] = { error: refreshed, deletions: [] });
      const deletions = outcomes.flatMap(({ pattern, entries, error }) =>
        entries.filter((entry) => filterMatches(filter, { pattern, entry })).map((entry) => ({ binding: { pattern, entry }, error })),
      );
      results[index] = { error: null, deletions };
    });
    return results;
  }

  /**
   * Changes one record by compare-and-swap: `edit` gets the ACLs there and returns the new ACLs,
   * or null for no change. The first attempt starts from the cached record (no GET); a lost race
   * or a "no change" decided on the cached record reads the record again. Returns the ACLs the
   * change started from.
   */
  async #change(key: string, pattern: ResourcePattern, edit: (before: readonly AccessControlEntry[]) => readonly AccessControlEntry[] | null): Promise<readonly AccessControlEntry[]> {
    const fullKey = ACL_RECORDS_PREFIX + key;
    let current: Versioned<AclRecord> | null | undefined = this.#records.get(key);
    let fresh = current === undefined;
    for (let attempt = 0; attempt < ACL_CAS_ATTEMPTS_MAX; attempt++) {
      if (current === undefined) current = await this.#control.read<AclRecord>(fullKey);
      const before = current === null ? [] : decodeAclRecord(key, current.value).entries;
      const after = edit(before);
      if (after === null && fresh) return before;
      if (after !== null) {
        const record = encodeAclRecord(after);
        const written = current === null ? await this.#control.create(fullKey, record) : await this.#control.replace(fullKey, current, record);
        if (written !== null) {
          this.#cache.note(key, written);
          this.#note(key, { etag: written.etag, resource: { pattern, entries: after } });
          return before;
        }
      }
      current = undefined;
      fresh = true;
    }
    throw new FerryError('Storage', `ACL record ${patternText(pattern)}: lost ${ACL_CAS_ATTEMPTS_MAX} compare-and-swap races in a row; try again`);
  }

  #note(key: string, known: KnownRecord): void {
    this.#known.set(key, known);
    this.authorizer.setResource(known.resource.pattern, known.resource.entries);
  }

  #serialized<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task, task);
    this.#queue = run.catch(() => {});
    return run;
  }
}

/** The ACLs with these added (each once), or null if all are there already. */
function withAdded(before: readonly AccessControlEntry[], entries: readonly AccessControlEntry[]): readonly AccessControlEntry[] | null {
  const after = [...before];
  for (const entry of entries) if (!after.some((present) => sameEntry(present, entry))) after.push(entry);
  return after.length === before.length ? null : after;
}

/** A failure of the store (or a record that does not read) as a result; a broken invariant stays thrown. */
function storageError(error: unknown): AclError {
  if (error instanceof AssertionError) throw error;
  return { kind: 'Storage', message: error instanceof Error ? error.message : String(error) };
}
