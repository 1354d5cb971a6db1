import { randomBytes } from 'node:crypto';
import { RecordCache, type ControlStore, type Versioned } from '../../control/control-store.ts';
import { FerryError } from '../../errors.ts';
import { mapLimited } from '../../util/map-limited.ts';
import { regressed } from '../../util/regressions.ts';
import { planAlteration, userKeyOf, type UserChange } from './alteration.ts';
import { scramCredentialFromSaltedPassword, type ScramCredential, type ScramCredentialLookup } from './credential.ts';
import { SCRAM_MECHANISMS } from './mechanism.ts';
import { credentialsOfRecord, recordWith, type ScramUserRecord } from './record.ts';
import { ScramErrorCode, ScramMessage, type AlterUserScramCredentialsResult, type DescribeUserScramCredentialsResult, type ScramCredentialDeletion, type ScramCredentialUpsertion } from './results.ts';
import { UNKNOWN_USER_SECRET_BYTES_MIN } from './unknown-user.ts';

/** Every user's record lies under this control prefix, keyed by encodeURIComponent(user). */
export const SCRAM_USERS_PREFIX = 'security/scram-users/';
/** The cluster's secret for unknown users' fake salts (unknown-user.ts), created once by whoever comes first. */
export const SCRAM_UNKNOWN_USER_SECRET_KEY = 'security/scram-unknown-user-secret';
/** Bytes of a new unknown-user secret. */
export const SCRAM_UNKNOWN_USER_SECRET_BYTES = 32;
/**
 * Compare-and-swap attempts per user in one AlterUserScramCredentials before the user is answered
 * REQUEST_TIMED_OUT (each lost race costs a GET and a conditional PUT).
 */
export const SCRAM_ALTER_ATTEMPTS_MAX = 8;
/** Users changed at once in one request: each holds a GET or a PUT in flight. */
export const SCRAM_ALTER_USERS_IN_FLIGHT_MAX = 16;

export interface ScramCredentialStoreOptions {
  /** Told of records left out (damaged, unreadable), and of store failures behind a refusal. */
  readonly log?: (message: string) => void;
}

interface UserEntry {
  readonly etag: string;
  readonly credentials: ReadonlyMap<string, ScramCredential>;
}

/**
 * SCRAM credentials in the control store, one record per user (record.ts). `lookup` answers from
 * memory: what the last `refresh` (one LIST, then GETs of changed records: RecordCache) found,
 * plus this process's own changes at once. Every change is a compare-and-swap of the user's
 * record, read again and retried when another broker wrote it first; a store failure is the
 * user's error in the answer, never a success.
 */
export class ScramCredentialStore implements ScramCredentialLookup {
  readonly #control: ControlStore;
  readonly #cache: RecordCache<ScramUserRecord>;
  readonly #log: (message: string) => void;
  #users = new Map<string, UserEntry>();
  #refreshing: Promise<void> | null = null;
  /** Own writes during a refresh: applied again after it, so a refresh that read before them does not undo them. */
  #notedDuringRefresh: Map<string, Versioned<ScramUserRecord>> | null = null;
  #secret: Promise<Uint8Array> | null = null;

  /** Whether a refresh has read every record once (until then, one unreadable record fails the refresh). */
  #loaded = false;

  constructor(control: ControlStore, options: ScramCredentialStoreOptions = {}) {
    this.#control = control;
    this.#cache = new RecordCache<ScramUserRecord>(control, SCRAM_USERS_PREFIX);
    this.#log = options.log ?? (() => {});
  }

  /** The user's credential for `mechanism` (a SASL name), as last refreshed or changed here. */
  lookup(user: string, mechanism: string): ScramCredential | null {
    return this.#users.get(user)?.credentials.get(mechanism) ?? null;
  }

  /**
   * Takes up every broker's changes: one LIST, GETs of the records that changed. Throws on a
   * failed LIST (the credentials known stay); a record that cannot be read keeps what was known
   * of it. The first refresh reads every record or throws: a broker that started without a user's
   * record would refuse that user's valid logins (SASL_AUTHENTICATION_FAILED, which clients take
   * as fatal) until its next refresh. Calls made while one runs share it.
   */
  refresh(): Promise<void> {
    this.#refreshing ??= this.#refresh().finally(() => void (this.#refreshing = null));
    return this.#refreshing;
  }

  async #refresh(): Promise<void> {
    const noted = new Map<string, Versioned<ScramUserRecord>>();
    this.#notedDuringRefresh = noted;
    try {
      const unreadable = new Set<string>();
      const keepKnown = (key: string, error: unknown) => {
        unreadable.add(key);
        this.#log(`SCRAM credentials record ${key} could not be read (what was known of it stays): ${error instanceof Error ? error.message : String(error)}`);
      };
      const records = await this.#cache.refresh(this.#loaded ? keepKnown : undefined);
      this.#loaded = true;
      const next = new Map<string, UserEntry>();
      for (const key of unreadable) {
        const user = userOfKey(key);
        const known = user === null ? undefined : this.#users.get(user);
        if (known !== undefined) next.set(user!, known);
      }
      for (const [key, record] of records) {
        const user = userOfKey(key);
        if (user === null) {
          this.#log(`SCRAM credentials record ${key}: its key is not an escaped user name; left out`);
          continue;
        }
        let entry = this.#users.get(user)?.etag === record.etag ? this.#users.get(user)! : this.#entryOf(user, record);
        const known = this.#users.get(user);
        if (regressed('scram-removed-user-still-logs-in') && entry !== null && known !== undefined && entry !== known)
          entry = { etag: entry.etag, credentials: new Map([...known.credentials, ...entry.credentials]) };
        if (entry !== null) next.set(user, entry);
      }
      this.#users = next;
      for (const [key, record] of noted) this.#take(key, record);
    } finally {
      this.#notedDuringRefresh = null;
    }
  }

  #entryOf(user: string, record: Versioned<ScramUserRecord>): UserEntry | null {
    const parsed = credentialsOfRecord(record.value, user);
    if ('why' in parsed) {
      this.#log(`SCRAM credentials record of a user left out: ${parsed.why}`);
      return null;
    }
    return { etag: record.etag, credentials: parsed.credentials };
  }

  /** A record this process wrote: known at once, and to the cache so a refresh need not read it. */
  #noteOwn(key: string, record: Versioned<ScramUserRecord>): void {
    this.#cache.note(key, record);
    this.#notedDuringRefresh?.set(key, record);
    this.#take(key, record);
  }

  #take(key: string, record: Versioned<ScramUserRecord>): void {
    const user = userOfKey(key);
    const entry = user === null ? null : this.#entryOf(user, record);
    if (entry !== null) this.#users.set(user!, entry);
  }

  /**
   * DescribeUserScramCredentials, after a refresh, as Kafka's ScramImage.describe: null or no
   * users describes every user that has a credential (by name); a user named twice is
   * DUPLICATE_RESOURCE, a user without credentials RESOURCE_NOT_FOUND, each with Kafka's message.
   * Results in the order the request names users. Throws if the refresh fails.
   */
  async describe(users: readonly string[] | null): Promise<DescribeUserScramCredentialsResult[]> {
    await this.refresh();
    if (users === null || users.length === 0) {
      const all = [...this.#users].filter(([, entry]) => entry.credentials.size > 0).map(([user]) => user);
      return all.sort().map((user) => this.#describeUser(user));
    }
    const mentions = new Map<string, number>();
    for (const user of users) mentions.set(user, (mentions.get(user) ?? 0) + 1);
    return [...mentions].map(([user, count]) =>
      count > 1 ? { user, errorCode: ScramErrorCode.DUPLICATE_RESOURCE, errorMessage: ScramMessage.DESCRIBE_DUPLICATE_USER + user, credentialInfos: [] } : this.#describeUser(user),
    );
  }

  #describeUser(user: string): DescribeUserScramCredentialsResult {
    const credentials = this.#users.get(user)?.credentials;
    const credentialInfos = SCRAM_MECHANISMS.flatMap((mechanism) => {
      const credential = credentials?.get(mechanism.name);
      return credential === undefined ? [] : [{ mechanism: mechanism.type, iterations: credential.iterations }];
    });
    if (credentialInfos.length === 0) return { user, errorCode: ScramErrorCode.RESOURCE_NOT_FOUND, errorMessage: ScramMessage.DESCRIBE_USER_THAT_DOES_NOT_EXIST + user, credentialInfos };
    return { user, errorCode: ScramErrorCode.NONE, errorMessage: null, credentialInfos };
  }

  /**
   * AlterUserScramCredentials as Kafka's ScramControlManager checks it (alteration.ts), then each
   * user's record changed by compare-and-swap. One result per user named, in the order first
   * named. Unlike Kafka's controller, users are changed one by one, not all or none: a store
   * failure fails only its user (UNKNOWN_SERVER_ERROR when nothing was written, REQUEST_TIMED_OUT
   * when a write may have taken effect or lost SCRAM_ALTER_ATTEMPTS_MAX races).
   */
  async alter(deletions: readonly ScramCredentialDeletion[], upsertions: readonly ScramCredentialUpsertion[]): Promise<AlterUserScramCredentialsResult[]> {
    const plan = planAlteration(deletions, upsertions);
    const results = new Map(plan.refused);
    await mapLimited([...plan.changes], SCRAM_ALTER_USERS_IN_FLIGHT_MAX, async ([user, change]) => void results.set(user, await this.#change(user, change)));
    return plan.order.map((user) => results.get(user)!);
  }

  async #change(user: string, change: UserChange): Promise<AlterUserScramCredentialsResult> {
    const key = userKeyOf(user)!; // the plan refused names without one
    const refuse = (errorCode: number, errorMessage: string): AlterUserScramCredentialsResult => ({ user, errorCode, errorMessage });
    for (let attempt = 0; attempt < SCRAM_ALTER_ATTEMPTS_MAX; attempt++) {
      let read: Versioned<ScramUserRecord> | null;
      try {
        read = await this.#control.read<ScramUserRecord>(SCRAM_USERS_PREFIX + key);
      } catch (error) {
        this.#log(`SCRAM credentials record ${key} could not be read for a change: ${messageOf(error)}`);
        return refuse(ScramErrorCode.UNKNOWN_SERVER_ERROR, `The SCRAM credentials could not be read: not altered: ${messageOf(error)}`);
      }
      const parsed = read === null ? { credentials: new Map<string, ScramCredential>() } : credentialsOfRecord(read.value, user);
      if ('why' in parsed) return refuse(ScramErrorCode.UNKNOWN_SERVER_ERROR, `The stored SCRAM credentials of this user are damaged (${parsed.why}): not altered`);
      const credentials = new Map(parsed.credentials);
      const { mechanism } = change;
      if (change.kind === 'delete') {
        if (!credentials.delete(mechanism.name)) return refuse(ScramErrorCode.RESOURCE_NOT_FOUND, ScramMessage.DELETE_MISSING);
      } else {
        const { salt, saltedPassword, iterations } = change.upsertion;
        credentials.set(mechanism.name, scramCredentialFromSaltedPassword(mechanism, salt, saltedPassword, iterations));
      }
      const value = recordWith(user, credentials);
      let written: Versioned<ScramUserRecord> | null;
      try {
        written = read === null ? await this.#control.create(SCRAM_USERS_PREFIX + key, value) : await this.#control.replace(SCRAM_USERS_PREFIX + key, read, value);
      } catch (error) {
        this.#log(`SCRAM credentials record ${key}: a change may or may not have taken effect: ${messageOf(error)}`);
        return refuse(ScramErrorCode.REQUEST_TIMED_OUT, `The change of the SCRAM credentials may or may not have taken effect: ${messageOf(error)}`);
      }
      if (written === null) continue; // another broker changed the record first: judged again on its version
      this.#noteOwn(key, written);
      return { user, errorCode: ScramErrorCode.NONE, errorMessage: null };
    }
    return refuse(ScramErrorCode.REQUEST_TIMED_OUT, `The SCRAM credentials changed under ${SCRAM_ALTER_ATTEMPTS_MAX} attempts in a row: not altered, try again`);
  }

  /**
   * The cluster's secret for unknown users' fake SCRAM salts: read, or created put-if-absent by
   * the first broker to need it, so every broker derives the same fake salt for a user. Throws on
   * a store failure (tried again at the next call) or a damaged record.
   */
  unknownUserSecret(): Promise<Uint8Array> {
    this.#secret ??= this.#loadSecret().catch((error: unknown) => {
      this.#secret = null;
      throw error;
    });
    return this.#secret;
  }

  async #loadSecret(): Promise<Uint8Array> {
    for (let attempt = 0; attempt < SECRET_ATTEMPTS_MAX; attempt++) {
      const read = await this.#control.read<{ secret?: unknown }>(SCRAM_UNKNOWN_USER_SECRET_KEY);
      if (read !== null) {
        const secret = typeof read.value?.secret === 'string' ? new Uint8Array(Buffer.from(read.value.secret, 'base64')) : new Uint8Array(0);
        if (secret.length < UNKNOWN_USER_SECRET_BYTES_MIN)
          throw new FerryError('CorruptObject', `control record ${SCRAM_UNKNOWN_USER_SECRET_KEY} holds no secret of at least ${UNKNOWN_USER_SECRET_BYTES_MIN} bytes`);
        return secret;
      }
      const secret = randomBytes(SCRAM_UNKNOWN_USER_SECRET_BYTES);
      const created = await this.#control.create(SCRAM_UNKNOWN_USER_SECRET_KEY, { secret: secret.toString('base64') });
      if (created !== null) return new Uint8Array(secret);
      // another broker created it first: read theirs
    }
    throw new FerryError('Storage', `control record ${SCRAM_UNKNOWN_USER_SECRET_KEY} was neither readable nor creatable in ${SECRET_ATTEMPTS_MAX} attempts (deleted as it is created?)`);
  }
}

/** Reads and creates of the unknown-user secret before giving up: it is never deleted, so two suffice. */
const SECRET_ATTEMPTS_MAX = 3;

/** The user a record key names; null for a key that is no escaped name. */
function userOfKey(key: string): string | null {
  try {
    const user = decodeURIComponent(key);
    return userKeyOf(user) === key ? user : null;
  } catch {
    return null;
  }
}

function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
