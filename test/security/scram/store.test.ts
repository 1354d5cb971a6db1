// SCRAM credentials in control records: Describe/AlterUserScramCredentials answers, the cache two
// brokers keep, compare-and-swap races and store failures.
import { describe, expect, test } from 'bun:test';
import { decodeControlRecord } from '../../../src/control/control-record.ts';
import { ControlStore, type Versioned } from '../../../src/control/control-store.ts';
import { FerryError } from '../../../src/errors.ts';
import { ScramSaslClient } from '../../../src/security/sasl/scram-client.ts';
import { ScramSaslServerFactory } from '../../../src/security/sasl/scram-server.ts';
import { saltedPasswordOf } from '../../../src/security/scram/credential.ts';
import { SCRAM_SHA_256, SCRAM_SHA_512, type ScramMechanism } from '../../../src/security/scram/mechanism.ts';
import { ScramErrorCode } from '../../../src/security/scram/results.ts';
import { SCRAM_ALTER_ATTEMPTS_MAX, SCRAM_USERS_PREFIX, ScramCredentialStore } from '../../../src/security/scram/store.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { exchange } from './fixtures.ts';

const PREFIX = 'cluster';

function upsertion(name: string, password: string, mechanism: ScramMechanism = SCRAM_SHA_256, iterations = 4096) {
  const salt = new TextEncoder().encode(`salt of ${name}`);
  return { name, mechanism: mechanism.type, iterations, salt, saltedPassword: saltedPasswordOf(mechanism, password, salt, iterations) };
}

function twoBrokers() {
  const memory = new MemoryStore();
  return { memory, a: new ScramCredentialStore(new ControlStore(memory, PREFIX)), b: new ScramCredentialStore(new ControlStore(memory, PREFIX)) };
}

async function logIn(store: ScramCredentialStore, mechanism: ScramMechanism, user: string, password: string): Promise<string> {
  const factory = new ScramSaslServerFactory(mechanism, { credentials: store, unknownUserSecret: await store.unknownUserSecret() });
  return (await exchange(new ScramSaslClient(mechanism, user, password), factory.create())).principal.name;
}

describe('alter and describe', () => {
  test('an upsertion is known at once here, after a refresh on another broker, and lets the user log in', async () => {
    const { a, b } = twoBrokers();
    expect(await a.alter([], [upsertion('alice', 'alice-secret'), upsertion('bob', 'bob-secret', SCRAM_SHA_512, 8192)])).toEqual([
      { user: 'alice', errorCode: 0, errorMessage: null },
      { user: 'bob', errorCode: 0, errorMessage: null },
    ]);
    expect(a.lookup('alice', 'SCRAM-SHA-256')?.iterations).toBe(4096);
    expect(b.lookup('alice', 'SCRAM-SHA-256')).toBeNull();
    await b.refresh();
    expect(await logIn(b, SCRAM_SHA_256, 'alice', 'alice-secret')).toBe('alice');
    expect(await logIn(b, SCRAM_SHA_512, 'bob', 'bob-secret')).toBe('bob');
    expect(b.lookup('bob', 'SCRAM-SHA-256')).toBeNull();
    expect(await b.describe(null)).toEqual([
      { user: 'alice', errorCode: 0, errorMessage: null, credentialInfos: [{ mechanism: 1, iterations: 4096 }] },
      { user: 'bob', errorCode: 0, errorMessage: null, credentialInfos: [{ mechanism: 2, iterations: 8192 }] },
    ]);
    expect(await b.describe([])).toEqual(await b.describe(null));
  });

  test('the record holds the credential, never the password or the salted password', async () => {
    const { memory, a } = twoBrokers();
    const change = upsertion('carol', 'carol-password');
    await a.alter([], [change]);
    const bytes = memory.peek(`${PREFIX}/control/${SCRAM_USERS_PREFIX}carol`)!;
    const stored = new TextDecoder().decode(bytes);
    expect(stored).not.toContain('carol-password');
    expect(stored).not.toContain(Buffer.from(change.saltedPassword).toString('base64'));
    expect(decodeControlRecord<{ credentials: Record<string, { iterations: number }> }>(bytes).value.credentials['SCRAM-SHA-256']!.iterations).toBe(4096);
  });

  test("describe: Kafka's messages for a user named twice and a user without credentials", async () => {
    const { a } = twoBrokers();
    await a.alter([], [upsertion('alice', 'pw')]);
    expect(await a.describe(['alice', 'nobody', 'alice', 'alice'])).toEqual([
      { user: 'alice', errorCode: ScramErrorCode.DUPLICATE_RESOURCE, errorMessage: 'Cannot describe SCRAM credentials for the same user twice in a single request: alice', credentialInfos: [] },
      { user: 'nobody', errorCode: ScramErrorCode.RESOURCE_NOT_FOUND, errorMessage: 'Attempt to describe a user credential that does not exist: nobody', credentialInfos: [] },
    ]);
  });

  test('deletions: RESOURCE_NOT_FOUND for a missing credential; the last one gone, the user is gone', async () => {
    const { a, b } = twoBrokers();
    await a.alter([], [upsertion('alice', 'pw')]);
    await a.alter([], [upsertion('alice', 'pw', SCRAM_SHA_512)]);
    expect(
      await a.alter(
        [
          { name: 'alice', mechanism: 2 },
          { name: 'nobody', mechanism: 1 },
        ],
        [],
      ),
    ).toEqual([
      { user: 'alice', errorCode: 0, errorMessage: null },
      { user: 'nobody', errorCode: ScramErrorCode.RESOURCE_NOT_FOUND, errorMessage: 'Attempt to delete a user credential that does not exist' },
    ]);
    expect(await a.alter([{ name: 'alice', mechanism: 2 }], [])).toEqual([
      { user: 'alice', errorCode: ScramErrorCode.RESOURCE_NOT_FOUND, errorMessage: 'Attempt to delete a user credential that does not exist' },
    ]);
    await b.refresh();
    expect(b.lookup('alice', 'SCRAM-SHA-512')).toBeNull();
    expect(b.lookup('alice', 'SCRAM-SHA-256')).not.toBeNull();
    expect(await a.alter([{ name: 'alice', mechanism: 1 }], [])).toEqual([{ user: 'alice', errorCode: 0, errorMessage: null }]);
    expect(a.lookup('alice', 'SCRAM-SHA-256')).toBeNull();
    expect((await b.describe(['alice']))[0]!.errorCode).toBe(ScramErrorCode.RESOURCE_NOT_FOUND);
    expect(await b.describe(null)).toEqual([]);
    expect(b.lookup('alice', 'SCRAM-SHA-256')).toBeNull();
  });

  test("Kafka's checks: a user named twice, an empty name, an unknown mechanism, iteration bounds", async () => {
    const { a } = twoBrokers();
    const results = await a.alter(
      [
        { name: 'twice', mechanism: 1 },
        { name: '', mechanism: 1 },
        { name: 'what', mechanism: 0 },
        { name: 'what3', mechanism: 3 },
      ],
      [
        upsertion('twice', 'pw', SCRAM_SHA_512),
        upsertion('twice', 'pw'),
        upsertion('few', 'pw', SCRAM_SHA_256, 4095),
        upsertion('many', 'pw', SCRAM_SHA_512, 16385),
        upsertion('least', 'pw', SCRAM_SHA_256, 4096),
        upsertion('most', 'pw', SCRAM_SHA_512, 16384),
      ],
    );
    expect(results).toEqual([
      { user: 'twice', errorCode: ScramErrorCode.DUPLICATE_RESOURCE, errorMessage: 'A user credential cannot be altered twice in the same request' },
      { user: '', errorCode: ScramErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: 'Username must not be empty' },
      { user: 'what', errorCode: ScramErrorCode.UNSUPPORTED_SASL_MECHANISM, errorMessage: 'Unknown SCRAM mechanism' },
      { user: 'what3', errorCode: ScramErrorCode.UNSUPPORTED_SASL_MECHANISM, errorMessage: 'Unknown SCRAM mechanism' },
      { user: 'few', errorCode: ScramErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: 'Too few iterations' },
      { user: 'many', errorCode: ScramErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: 'Too many iterations' },
      { user: 'least', errorCode: 0, errorMessage: null },
      { user: 'most', errorCode: 0, errorMessage: null },
    ]);
    expect(a.lookup('twice', 'SCRAM-SHA-256')).toBeNull();
    expect(a.lookup('few', 'SCRAM-SHA-256')).toBeNull();
  });

  test("Ferry's own bounds: a salted password of the wrong length, an unwritable name", async () => {
    const { a } = twoBrokers();
    const short = { ...upsertion('short', 'pw'), saltedPassword: new Uint8Array(16) };
    const results = await a.alter([], [short, upsertion('x'.repeat(254), 'pw'), upsertion('bad\ud800', 'pw'), upsertion('x'.repeat(253), 'pw'), upsertion('../a/b', 'pw')]);
    expect(results.map((result) => result.errorCode)).toEqual([93, 93, 93, 0, 0]);
    expect(results[0]!.errorMessage).toBe('The salted password of SCRAM-SHA-256 must be 32 bytes, not 16');
    expect(await logIn(a, SCRAM_SHA_256, '../a/b', 'pw')).toBe('../a/b');
  });
});

/** A control store whose next conditional write of a user's record lets `first` write before it. */
class RacingControl extends ControlStore {
  #before: (() => Promise<void>) | null = null;
  racing(first: () => Promise<void>): void {
    this.#before = first;
  }
  async #race(): Promise<void> {
    const before = this.#before;
    this.#before = null;
    await before?.();
  }
  override async create<T>(key: string, value: T): Promise<Versioned<T> | null> {
    await this.#race();
    return super.create(key, value);
  }
  override async replace<T>(key: string, previous: Versioned<T>, value: T): Promise<Versioned<T> | null> {
    await this.#race();
    return super.replace(key, previous, value);
  }
}

describe('races and failures', () => {
  test("two brokers creating one user's record at once: the loser reads the winner's and keeps both credentials", async () => {
    const memory = new MemoryStore();
    const control = new RacingControl(memory, PREFIX);
    const a = new ScramCredentialStore(control);
    const b = new ScramCredentialStore(new ControlStore(memory, PREFIX));
    control.racing(async () => void expect(await b.alter([], [upsertion('alice', 'pw-512', SCRAM_SHA_512)])).toEqual([{ user: 'alice', errorCode: 0, errorMessage: null }]));
    expect(await a.alter([], [upsertion('alice', 'pw-256')])).toEqual([{ user: 'alice', errorCode: 0, errorMessage: null }]);
    await b.refresh();
    expect(await logIn(b, SCRAM_SHA_256, 'alice', 'pw-256')).toBe('alice');
    expect(await logIn(b, SCRAM_SHA_512, 'alice', 'pw-512')).toBe('alice');
    expect(a.lookup('alice', 'SCRAM-SHA-512')).not.toBeNull(); // its own write, taken at once, holds both
  });

  test("a deletion racing another broker's deletion of the same credential ends RESOURCE_NOT_FOUND, not a false success", async () => {
    const memory = new MemoryStore();
    const control = new RacingControl(memory, PREFIX);
    const a = new ScramCredentialStore(control);
    const b = new ScramCredentialStore(new ControlStore(memory, PREFIX));
    await a.alter([], [upsertion('alice', 'pw')]);
    control.racing(async () => void (await b.alter([{ name: 'alice', mechanism: 1 }], [])));
    expect(await a.alter([{ name: 'alice', mechanism: 1 }], [])).toEqual([
      { user: 'alice', errorCode: ScramErrorCode.RESOURCE_NOT_FOUND, errorMessage: 'Attempt to delete a user credential that does not exist' },
    ]);
  });

  test('a record that changes under every attempt: REQUEST_TIMED_OUT after the last, not altered', async () => {
    const memory = new MemoryStore();
    const control = new (class extends ControlStore {
      override async replace<T>(): Promise<Versioned<T> | null> {
        return null;
      }
    })(memory, PREFIX);
    await new ScramCredentialStore(new ControlStore(memory, PREFIX)).alter([], [upsertion('alice', 'pw')]);
    const [result] = await new ScramCredentialStore(control).alter([], [upsertion('alice', 'new', SCRAM_SHA_512)]);
    expect(result!.errorCode).toBe(ScramErrorCode.REQUEST_TIMED_OUT);
    expect(result!.errorMessage).toContain(`${SCRAM_ALTER_ATTEMPTS_MAX} attempts`);
  });

  test('a write that fails (it may have landed) is REQUEST_TIMED_OUT; a read that fails is UNKNOWN_SERVER_ERROR; neither is a success', async () => {
    const memory = new MemoryStore();
    const store = new ScramCredentialStore(new ControlStore(memory, PREFIX));
    memory.injectFault({ operation: 'put', kind: 'Timeout', afterEffect: true, keyPrefix: `${PREFIX}/control/${SCRAM_USERS_PREFIX}` });
    const [timedOut] = await store.alter([], [upsertion('alice', 'pw')]);
    expect(timedOut!.errorCode).toBe(ScramErrorCode.REQUEST_TIMED_OUT);
    expect(timedOut!.errorMessage).toContain('may or may not have taken effect');
    expect(store.lookup('alice', 'SCRAM-SHA-256')).toBeNull(); // not taken as done...
    await store.refresh();
    expect(store.lookup('alice', 'SCRAM-SHA-256')).not.toBeNull(); // ...though it landed, as a refresh finds

    memory.injectFault({ operation: 'get', kind: 'Unavailable', keyPrefix: `${PREFIX}/control/${SCRAM_USERS_PREFIX}` });
    const [unread] = await store.alter([], [upsertion('bob', 'pw')]);
    expect(unread!.errorCode).toBe(ScramErrorCode.UNKNOWN_SERVER_ERROR);
    expect(store.lookup('bob', 'SCRAM-SHA-256')).toBeNull();
  });

  test('a failed LIST fails the refresh and keeps what was known; an unreadable record keeps its last version', async () => {
    const memory = new MemoryStore();
    const writer = new ScramCredentialStore(new ControlStore(memory, PREFIX));
    const reader = new ScramCredentialStore(new ControlStore(memory, PREFIX));
    await writer.alter([], [upsertion('alice', 'pw'), upsertion('bob', 'pw')]);
    await reader.refresh();
    memory.injectFault({ operation: 'list', kind: 'Unavailable' });
    await expect(reader.refresh()).rejects.toThrow();
    expect(reader.lookup('alice', 'SCRAM-SHA-256')).not.toBeNull();
    await writer.alter([], [upsertion('alice', 'pw', SCRAM_SHA_512)]);
    memory.injectFault({ operation: 'get', kind: 'Unavailable', keyPrefix: `${PREFIX}/control/${SCRAM_USERS_PREFIX}alice` });
    await reader.refresh();
    expect(reader.lookup('alice', 'SCRAM-SHA-256')).not.toBeNull();
    expect(reader.lookup('alice', 'SCRAM-SHA-512')).toBeNull();
    await reader.refresh(); // read again now that the store answers
    expect(reader.lookup('alice', 'SCRAM-SHA-512')).not.toBeNull();
  });

  test('the first refresh reads every record or fails: a broker never starts without a user whose record could not be read (sim seeds 9, 33, 169, 284)', async () => {
    const memory = new MemoryStore();
    await new ScramCredentialStore(new ControlStore(memory, PREFIX)).alter([], [upsertion('alice', 'pw')]);
    const starting = new ScramCredentialStore(new ControlStore(memory, PREFIX));
    memory.injectFault({ operation: 'get', kind: 'Unavailable', keyPrefix: `${PREFIX}/control/${SCRAM_USERS_PREFIX}alice` });
    await expect(starting.refresh()).rejects.toThrow();
    await starting.refresh(); // the store answers again: loaded whole
    expect(starting.lookup('alice', 'SCRAM-SHA-256')).not.toBeNull();
  });

  test('a damaged record is left out and logged, and not overwritten by a change', async () => {
    const memory = new MemoryStore();
    const control = new ControlStore(memory, PREFIX);
    const logged: string[] = [];
    const store = new ScramCredentialStore(control, { log: (line) => logged.push(line) });
    await control.put(`${SCRAM_USERS_PREFIX}mallory`, { user: 'mallory', credentials: { 'SCRAM-SHA-256': { salt: 'AA==', iterations: 4096, storedKey: 'AA==', serverKey: 'AA==' } } });
    await control.put(`${SCRAM_USERS_PREFIX}eve`, { user: 'someone else', credentials: {} });
    await store.refresh();
    expect(store.lookup('mallory', 'SCRAM-SHA-256')).toBeNull();
    expect(logged.length).toBe(2);
    const [result] = await store.alter([], [upsertion('mallory', 'pw')]);
    expect(result!.errorCode).toBe(ScramErrorCode.UNKNOWN_SERVER_ERROR);
  });

  test('a change made while a refresh reads the old record stays known after the refresh', async () => {
    const memory = new MemoryStore();
    let during: (() => Promise<void>) | null = null;
    const control = new (class extends ControlStore {
      override async read<T>(key: string): Promise<Versioned<T> | null> {
        const old = await super.read<T>(key);
        const change = during;
        during = null;
        await change?.(); // this broker's own change lands after the refresh read the record
        return old;
      }
    })(memory, PREFIX);
    const store = new ScramCredentialStore(control);
    await new ScramCredentialStore(new ControlStore(memory, PREFIX)).alter([], [upsertion('alice', 'pw')]);
    during = async () => void expect((await store.alter([], [upsertion('alice', 'pw', SCRAM_SHA_512)]))[0]!.errorCode).toBe(0);
    await store.refresh();
    expect(store.lookup('alice', 'SCRAM-SHA-512')).not.toBeNull();
    expect(store.lookup('alice', 'SCRAM-SHA-256')).not.toBeNull();
  });

  test('the unknown-user secret: created once, the same for every broker', async () => {
    const { a, b } = twoBrokers();
    const [first, second] = await Promise.all([a.unknownUserSecret(), b.unknownUserSecret()]);
    expect(first.length).toBe(32);
    expect(Buffer.from(second).equals(Buffer.from(first))).toBe(true);
    expect(Buffer.from(await new ScramCredentialStore(new ControlStore(new MemoryStore(), PREFIX)).unknownUserSecret()).equals(Buffer.from(first))).toBe(false);
  });

  test('a damaged unknown-user secret is an error, not a weak secret', async () => {
    const memory = new MemoryStore();
    const control = new ControlStore(memory, PREFIX);
    await control.put('security/scram-unknown-user-secret', { secret: 'c2hvcnQ=' });
    const error = await new ScramCredentialStore(control).unknownUserSecret().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FerryError);
  });
});
