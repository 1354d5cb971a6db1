import { type ControlStore, RecordCache, type Versioned } from '../../control/control-store.ts';
import { AssertionError } from '../../util/assert.ts';
import { mapLimited } from '../../util/map-limited.ts';
import { entityId, entityParts, entityText, type EntityQuotas, type QuotaEntity, type QuotaEntityPart, type QuotaKey, QUOTA_KEY_TYPES } from './model.ts';
import { type AppliedQuota, appliedQuota } from './precedence.ts';
import { decodeQuotaRecord, encodeQuotaRecord, entityOfRecordKey, QUOTA_RECORDS_PREFIX, type QuotaRecord, quotaRecordKey } from './record.ts';
import { answeredEntityId, answeredParts, checkAlteration, checkFilter, filterMatches, type QuotaAlterationRequest, type QuotaChange, QuotaErrorCode, type QuotaFilterComponent } from './validate.ts';

/**
 * Compare-and-swap attempts on one entity's record before a change gives up (REQUEST_TIMED_OUT).
 * Each costs a GET and a PUT; only brokers changing the same entity at the same moment race.
 */
export const QUOTA_CAS_ATTEMPTS_MAX = 10;
/** Entities written at once by one AlterClientQuotas (each write holds a GET or a PUT in flight). */
export const QUOTA_WRITES_CONCURRENCY_MAX = 8;

/** DescribeClientQuotas' answer: the entities a filter selects with their quotas, or the request's error (entries null). */
export interface DescribeClientQuotasResult {
  readonly errorCode: QuotaErrorCode;
  readonly errorMessage: string | null;
  readonly entries: readonly { readonly entity: readonly QuotaEntityPart[]; readonly values: readonly { readonly key: string; readonly value: number }[] }[] | null;
}

/** One entity's outcome in AlterClientQuotas. */
export interface AlterClientQuotasResult {
  readonly entity: readonly QuotaEntityPart[];
  readonly errorCode: QuotaErrorCode;
  readonly errorMessage: string | null;
}

/** What enforcement asks: the quota that applies to a client (precedence.ts), or null. */
export interface ClientQuotaLimits {
  appliedQuota(key: QuotaKey, user: string, clientId: string): AppliedQuota | null;
}

/** What the quota API handlers need. */
export interface ClientQuotaService extends ClientQuotaLimits {
  describe(components: readonly QuotaFilterComponent[], strict: boolean): DescribeClientQuotasResult;
  alter(entries: readonly QuotaAlterationRequest[], validateOnly: boolean): Promise<AlterClientQuotasResult[]>;
}

export interface ClientQuotaStoreOptions {
  /** Told of records left out (damaged, unreadable) and of store failures behind an error answer. */
  readonly log?: (message: string) => void;
}

interface KnownEntity {
  readonly entity: QuotaEntity;
  readonly quotas: EntityQuotas;
}

/**
 * The cluster's client quotas in the control metadata (record.ts: one record per entity), read by
 * enforcement from memory. Every change is a compare-and-swap on the entity's record, retried with
 * a fresh read when another broker wrote it first, so brokers changing the same entity at once
 * both land. `refresh()` (one LIST, a GET per changed record) brings in other brokers' changes;
 * this process's own changes apply as soon as their write succeeds. Refreshes and changes run one
 * at a time, so a refresh that listed before a write cannot undo it. Unlike Kafka's controller,
 * the entities of one request are changed one by one, not all or none.
 */
export class ClientQuotaStore implements ClientQuotaService {
  readonly #control: ControlStore;
  /** Whether a refresh has read every record once. */
  #loaded = false;
  readonly #cache: RecordCache<QuotaRecord>;
  readonly #log: (message: string) => void;
  /** Entities with their quotas, by entityId (those with none left out). */
  #entities = new Map<string, KnownEntity>();
  /** What each record key held when last read or written, by key under QUOTA_RECORDS_PREFIX. */
  #records: ReadonlyMap<string, Versioned<QuotaRecord>> = new Map();
  #queue: Promise<unknown> = Promise.resolve();

  constructor(control: ControlStore, options: ClientQuotaStoreOptions = {}) {
    this.#control = control;
    this.#cache = new RecordCache<QuotaRecord>(control, QUOTA_RECORDS_PREFIX);
    this.#log = options.log ?? (() => {});
  }

  /**
   * Takes up every broker's changes: one LIST, GETs of the records that changed. Throws on a
   * failed LIST (the quotas known stay); a record that cannot be read, or is damaged, keeps what
   * was known of its entity and is logged.
   */
  refresh(): Promise<void> {
    return this.#serialized(() => this.#refresh());
  }

  appliedQuota(key: QuotaKey, user: string, clientId: string): AppliedQuota | null {
    if (this.#entities.size === 0) return null; // every request asks: without quotas, no level's entity is built
    return appliedQuota((entity) => this.#entities.get(entityId(entity))?.quotas, key, user, clientId);
  }

  /** The quotas of an entity as this broker knows them (empty: none). */
  quotasOf(entity: QuotaEntity): EntityQuotas {
    return this.#entities.get(entityId(entity))?.quotas ?? new Map();
  }

  /**
   * DescribeClientQuotas as Kafka's ClientQuotasImage answers it, from what this broker knows
   * (what it enforces): the filter checked with Kafka's errors, then every entity with quotas it
   * selects, ordered by entity. An entity's parts come in the order Kafka's HashMap gives them
   * (client-id before user), its values in a fixed key order; clients read both by name.
   */
  describe(components: readonly QuotaFilterComponent[], strict: boolean): DescribeClientQuotasResult {
    const filter = checkFilter(components, strict);
    if ('errorCode' in filter) return { ...filter, entries: null };
    const entries = [...this.#entities.values()]
      .filter(({ entity }) => filterMatches(filter, entity))
      .map(({ entity, quotas }) => ({ entity: entityParts(entity), values: [...QUOTA_KEY_TYPES.keys()].filter((key) => quotas.has(key)).map((key) => ({ key, value: quotas.get(key)! })) }))
      .sort((a, b) => compare(JSON.stringify(a.entity), JSON.stringify(b.entity)));
    return { errorCode: QuotaErrorCode.NONE, errorMessage: null, entries };
  }

  /**
   * AlterClientQuotas: one result per entity named, in the order first named. Each entry is
   * checked as Kafka's controller checks it (validate.ts); an entity named by two entries is
   * refused whole ("Ignoring duplicate entity", where Kafka would still apply the first entry).
   * validateOnly: the checks only. Otherwise each entity's record is changed by compare-and-swap
   * (nothing is written when nothing changes); a store failure fails only its entity:
   * UNKNOWN_SERVER_ERROR when nothing was written, REQUEST_TIMED_OUT when a write may have
   * taken effect or lost QUOTA_CAS_ATTEMPTS_MAX races.
   */
  alter(entries: readonly QuotaAlterationRequest[], validateOnly: boolean): Promise<AlterClientQuotasResult[]> {
    return this.#serialized(() => this.#alter(entries, validateOnly));
  }

  async #alter(entries: readonly QuotaAlterationRequest[], validateOnly: boolean): Promise<AlterClientQuotasResult[]> {
    const order: string[] = [];
    const named = new Map<string, { parts: QuotaEntityPart[]; entries: QuotaAlterationRequest[] }>();
    for (const entry of entries) {
      const id = answeredEntityId(entry.entity);
      const known = named.get(id);
      if (known !== undefined) known.entries.push(entry);
      else {
        order.push(id);
        named.set(id, { parts: answeredParts(entry.entity), entries: [entry] });
      }
    }
    const results = new Map<string, AlterClientQuotasResult>();
    const changes: [string, QuotaChange][] = [];
    for (const [id, { parts, entries: naming }] of named) {
      const refuse = (errorCode: QuotaErrorCode, errorMessage: string) => results.set(id, { entity: parts, errorCode, errorMessage });
      if (naming.length > 1) {
        refuse(QuotaErrorCode.INVALID_REQUEST, `Ignoring duplicate entity ${entityText(parts)}`);
        continue;
      }
      const checked = checkAlteration(naming[0]!);
      if ('errorCode' in checked) refuse(checked.errorCode, checked.errorMessage);
      else if (validateOnly) results.set(id, { entity: parts, errorCode: QuotaErrorCode.NONE, errorMessage: null });
      else changes.push([id, checked]);
    }
    await mapLimited(changes, QUOTA_WRITES_CONCURRENCY_MAX, async ([id, change]) => {
      const error = await this.#change(change);
      results.set(id, { entity: named.get(id)!.parts, errorCode: error?.errorCode ?? QuotaErrorCode.NONE, errorMessage: error?.errorMessage ?? null });
    });
    return order.map((id) => results.get(id)!);
  }

  /**
   * Applies one entity's change by compare-and-swap. The first attempt starts from the record as
   * last read (no GET); a lost race reads it again and applies the change to what is there now.
   * Returns null, or the entity's error.
   */
  async #change(change: QuotaChange): Promise<{ errorCode: QuotaErrorCode; errorMessage: string } | null> {
    const key = quotaRecordKey(change.entity);
    if (key === null) throw new AssertionError('a checked entity has a record key');
    const fullKey = QUOTA_RECORDS_PREFIX + key;
    let current: Versioned<QuotaRecord> | null | undefined = this.#records.get(key);
    for (let attempt = 0; attempt < QUOTA_CAS_ATTEMPTS_MAX; attempt++) {
      if (current === undefined) {
        try {
          current = await this.#control.read<QuotaRecord>(fullKey);
        } catch (error) {
          this.#log(`quota record ${key} could not be read for a change: ${messageOf(error)}`);
          return { errorCode: QuotaErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: `The entity's quotas could not be read: not altered: ${messageOf(error)}` };
        }
      }
      let before: EntityQuotas;
      try {
        before = current === null ? new Map() : decodeQuotaRecord(key, current.value);
      } catch (error) {
        return { errorCode: QuotaErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: `The entity's stored quotas are damaged (${messageOf(error)}): not altered` };
      }
      const after = applied(before, change.ops);
      if (after === null) return null;
      let written: Versioned<QuotaRecord> | null;
      try {
        written = current === null ? await this.#control.create(fullKey, encodeQuotaRecord(after)) : await this.#control.replace(fullKey, current, encodeQuotaRecord(after));
      } catch (error) {
        this.#log(`quota record ${key}: a change may or may not have taken effect: ${messageOf(error)}`);
        return { errorCode: QuotaErrorCode.REQUEST_TIMED_OUT, errorMessage: `The change of the entity's quotas may or may not have taken effect: ${messageOf(error)}` };
      }
      if (written !== null) {
        this.#cache.note(key, written);
        this.#records = new Map(this.#records).set(key, written);
        this.#take(change.entity, after);
        return null;
      }
      current = undefined; // another broker changed the record first: apply the change to its version
    }
    return { errorCode: QuotaErrorCode.REQUEST_TIMED_OUT, errorMessage: `The entity's quotas changed under ${QUOTA_CAS_ATTEMPTS_MAX} attempts in a row: not altered, try again` };
  }

  /** A record that cannot be read keeps what was known of it; the first refresh reads every record or throws, so a broker never starts without a quota. */
  async #refresh(): Promise<void> {
    const unreadable = new Set<string>();
    const keepKnown = (key: string, error: unknown) => {
      unreadable.add(key);
      this.#log(`quota record ${key} could not be read (what was known of it stays): ${messageOf(error)}`);
    };
    const records = await this.#cache.refresh(this.#loaded ? keepKnown : undefined);
    this.#loaded = true;
    const previous = this.#records;
    const next = new Map<string, KnownEntity>();
    for (const key of unreadable) this.#keep(next, key);
    for (const [key, record] of records) {
      const entity = entityOfRecordKey(key);
      if (entity === null) {
        this.#log(`quota record ${key}: its key names no quota entity; left out`);
        continue;
      }
      if (previous.get(key)?.etag === record.etag) {
        this.#keep(next, key);
        continue;
      }
      try {
        const quotas = decodeQuotaRecord(key, record.value);
        if (quotas.size > 0) next.set(entityId(entity), { entity, quotas });
      } catch (error) {
        this.#log(`quota record ${key} left out (what was known of it stays): ${messageOf(error)}`);
        this.#keep(next, key);
      }
    }
    this.#records = new Map(records);
    this.#entities = next;
  }

  /** Carries what was known of a record's entity into the next view. */
  #keep(next: Map<string, KnownEntity>, key: string): void {
    const entity = entityOfRecordKey(key);
    const known = entity === null ? undefined : this.#entities.get(entityId(entity));
    if (known !== undefined) next.set(entityId(known.entity), known);
  }

  #take(entity: QuotaEntity, quotas: EntityQuotas): void {
    if (quotas.size === 0) this.#entities.delete(entityId(entity));
    else this.#entities.set(entityId(entity), { entity, quotas });
  }

  #serialized<T>(task: () => Promise<T>): Promise<T> {
    const run = this.#queue.then(task, task);
    this.#queue = run.catch(() => {});
    return run;
  }
}

/** The quotas after `ops` (a value sets, null removes), or null if nothing changes. */
function applied(before: EntityQuotas, ops: ReadonlyMap<QuotaKey, number | null>): EntityQuotas | null {
  const after = new Map(before);
  for (const [key, value] of ops) {
    if (value === null) after.delete(key);
    else after.set(key, value);
  }
  const same = after.size === before.size && [...after].every(([key, value]) => before.get(key) === value);
  return same ? null : new Map([...QUOTA_KEY_TYPES.keys()].filter((key) => after.has(key)).map((key) => [key, after.get(key)!]));
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function messageOf(error: unknown): string {
  if (error instanceof AssertionError) throw error;
  return error instanceof Error ? error.message : String(error);
}
