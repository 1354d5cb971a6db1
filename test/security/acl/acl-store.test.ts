import { describe, expect, test } from 'bun:test';
import { decodeControlRecord } from '../../../src/control/control-record.ts';
import { ControlStore } from '../../../src/control/control-store.ts';
import { isFerryError } from '../../../src/errors.ts';
import { ACL_RECORD_NAME_KEY_CHARS_MAX } from '../../../src/security/acl/acl-record.ts';
import { AclStore } from '../../../src/security/acl/acl-store.ts';
import { Authorizer } from '../../../src/security/acl/authorizer.ts';
import {
  type AclBinding,
  type AclBindingFilter,
  AclOperation,
  AclPermissionType,
  bindingText,
  MATCH_ALL_FILTER,
  PatternType,
  ResourceType,
  sameEntry,
  samePattern,
} from '../../../src/security/acl/model.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { acl, session } from './helpers.ts';

const RECORDS = 'cluster/control/security/acls/';
const alice = session('User:alice');
const { TOPIC, GROUP } = ResourceType;

function brokers(count: number, store = new MemoryStore()): { store: MemoryStore; acls: AclStore[] } {
  const acls = Array.from({ length: count }, () => new AclStore(new ControlStore(store, 'cluster'), new Authorizer()));
  return { store, acls };
}

function filterOf(draft: Partial<AclBindingFilter['pattern']> & Partial<AclBindingFilter['entry']>): AclBindingFilter {
  return {
    pattern: { resourceType: draft.resourceType ?? ResourceType.ANY, name: draft.name ?? null, patternType: draft.patternType ?? PatternType.ANY },
    entry: { principal: draft.principal ?? null, host: draft.host ?? null, operation: draft.operation ?? AclOperation.ANY, permissionType: draft.permissionType ?? AclPermissionType.ANY },
  };
}

const readRecord = (store: MemoryStore, key: string): unknown => decodeControlRecord(store.peek(RECORDS + key)!).value;

describe('records', () => {
  test("one record per resource pattern, named by types and the encoded name, in Kafka's words", async () => {
    const {
      store,
      acls: [a],
    } = brokers(1);
    await a!.refresh();
    const results = await a!.create([
      acl({ resourceType: TOPIC, name: 'orders/eu' }),
      acl({ resourceType: TOPIC, name: 'orders/eu', operation: AclOperation.WRITE, host: '10.0.0.1' }),
      acl({ resourceType: GROUP, name: 'app-', patternType: PatternType.PREFIXED, principal: 'User:*', permissionType: AclPermissionType.DENY }),
    ]);
    expect(results).toEqual([{ error: null }, { error: null }, { error: null }]);
    expect(store.peekKeys(RECORDS)).toEqual([`${RECORDS}GROUP/PREFIXED/app-`, `${RECORDS}TOPIC/LITERAL/orders%2Feu`]);
    expect(readRecord(store, 'TOPIC/LITERAL/orders%2Feu')).toEqual({
      version: 1,
      acls: [
        { principal: 'User:alice', host: '*', operation: 'READ', permissionType: 'ALLOW' },
        { principal: 'User:alice', host: '10.0.0.1', operation: 'WRITE', permissionType: 'ALLOW' },
      ],
    });
  });

  test('a record whose last ACL was deleted stays, empty, and the resource is unnamed again', async () => {
    const store = new MemoryStore();
    const control = new ControlStore(store, 'cluster');
    const a = new AclStore(control, new Authorizer({ allowEveryoneIfNoAclFound: true }));
    await a.refresh();
    await a.create([acl({ resourceType: TOPIC, name: 't', principal: 'User:bob' })]);
    expect(a.authorizer.authorize(alice, AclOperation.READ, TOPIC, 't')).toBe(false);
    const [deleted] = await a.delete([filterOf({ resourceType: TOPIC, name: 't' })]);
    expect(deleted!.deletions.map((d) => d.binding.entry.principal)).toEqual(['User:bob']);
    expect(readRecord(store, 'TOPIC/LITERAL/t')).toEqual({ version: 1, acls: [] });
    expect(a.authorizer.authorize(alice, AclOperation.READ, TOPIC, 't')).toBe(true);
    const b = new AclStore(control, new Authorizer({ allowEveryoneIfNoAclFound: true }));
    await b.refresh();
    expect([b.authorizer.aclCount(), b.authorizer.authorize(alice, AclOperation.READ, TOPIC, 't')]).toEqual([0, true]);
  });
});

describe('create and delete', () => {
  test("this process's changes decide at once; another broker's after its refresh", async () => {
    const {
      acls: [a, b],
    } = brokers(2);
    await Promise.all([a!.refresh(), b!.refresh()]);
    await a!.create([acl({ resourceType: TOPIC, name: 'orders' })]);
    expect(a!.authorizer.authorize(alice, AclOperation.READ, TOPIC, 'orders')).toBe(true);
    expect(b!.authorizer.authorize(alice, AclOperation.READ, TOPIC, 'orders')).toBe(false);
    await b!.refresh();
    expect(b!.authorizer.authorize(alice, AclOperation.READ, TOPIC, 'orders')).toBe(true);
    await b!.delete([filterOf({ principal: 'User:alice' })]);
    expect(b!.authorizer.authorize(alice, AclOperation.READ, TOPIC, 'orders')).toBe(false);
    await a!.refresh();
    expect(a!.acls(MATCH_ALL_FILTER)).toEqual([]);
  });

  test('creating an ACL that exists is a success with no write', async () => {
    const {
      store,
      acls: [a, b],
    } = brokers(2);
    await a!.create([acl({ resourceType: TOPIC, name: 't' })]);
    const puts = store.stats().requests.put;
    expect(await b!.create([acl({ resourceType: TOPIC, name: 't' }), acl({ resourceType: TOPIC, name: 't' })])).toEqual([{ error: null }, { error: null }]);
    expect(store.stats().requests.put).toBe(puts);
    await b!.refresh();
    expect(b!.acls(MATCH_ALL_FILTER)).toHaveLength(1);
  });

  test('a create decided on a stale cached record reads again before it calls the ACL present', async () => {
    const {
      acls: [a, b],
    } = brokers(2);
    await a!.create([acl({ resourceType: TOPIC, name: 't' })]);
    await b!.refresh();
    await a!.delete([filterOf({})]);
    expect(await b!.create([acl({ resourceType: TOPIC, name: 't' })])).toEqual([{ error: null }]);
    await a!.refresh();
    expect(a!.acls(MATCH_ALL_FILTER)).toHaveLength(1);
  });

  test('invalid ACLs and filters are refused one by one, the valid ones in the same call go through', async () => {
    const {
      acls: [a],
    } = brokers(1);
    const good = acl({ resourceType: TOPIC, name: 't' });
    const results = await a!.create([
      acl({ resourceType: TOPIC, name: 't', patternType: PatternType.MATCH }),
      good,
      acl({ resourceType: TOPIC, name: 't', principal: 'alice' }),
      acl({ resourceType: TOPIC, name: 'x'.repeat(ACL_RECORD_NAME_KEY_CHARS_MAX + 1) }),
    ]);
    expect(results.map((r) => r.error?.kind ?? null)).toEqual(['InvalidRequest', null, 'InvalidRequest', 'InvalidRequest']);
    expect(results[0]!.error!.message).toBe('Invalid patternType MATCH');
    expect(results[3]!.error!.message).toContain('Resource name too long');
    const deleted = await a!.delete([filterOf({ patternType: PatternType.UNKNOWN }), filterOf({ resourceType: TOPIC })]);
    expect(deleted).toEqual([
      { error: { kind: 'InvalidRequest', message: 'Unknown patternFilter.' }, deletions: [] },
      { error: null, deletions: [{ binding: good, error: null }] },
    ]);
  });

  test('DeleteAcls: what each filter matched, an ACL two filters match listed by both, MATCH filters', async () => {
    const {
      acls: [a],
    } = brokers(1);
    const literal = acl({ resourceType: TOPIC, name: 'orders' });
    const prefixed = acl({ resourceType: TOPIC, name: 'ord', patternType: PatternType.PREFIXED, operation: AclOperation.WRITE });
    const wildcard = acl({ resourceType: TOPIC, name: '*', principal: 'User:bob' });
    const other = acl({ resourceType: TOPIC, name: 'payments' });
    await a!.create([literal, prefixed, wildcard, other]);
    const results = await a!.delete([filterOf({ resourceType: TOPIC, name: 'orders', patternType: PatternType.MATCH }), filterOf({ operation: AclOperation.WRITE }), filterOf({ name: 'nothing' })]);
    const deleted = results.map((r) => r.deletions.map((d) => d.binding));
    expect(deleted[0]!.toSorted((x, y) => x.pattern.name.localeCompare(y.pattern.name))).toEqual([wildcard, prefixed, literal]);
    expect(deleted[1]).toEqual([prefixed]);
    expect(deleted[2]).toEqual([]);
    expect(a!.acls(MATCH_ALL_FILTER)).toEqual([other]);
  });
});

describe('races between brokers', () => {
  test('creates of the same resource from two brokers at once all land', async () => {
    const {
      store,
      acls: [a, b],
    } = brokers(2, new MemoryStore({ latency: 's3-express', seed: 7 }));
    const principals = Array.from({ length: 12 }, (_, i) => `User:u${i}`);
    const results = await Promise.all(principals.map((principal, i) => (i % 2 === 0 ? a! : b!).create([acl({ resourceType: TOPIC, name: 'shared', principal })])));
    expect(results.flat()).toEqual(principals.map(() => ({ error: null })));
    expect(store.stats().errors.PreconditionFailed).toBeGreaterThan(0); // they did race
    await Promise.all([a!.refresh(), b!.refresh()]);
    for (const broker of [a!, b!])
      expect(
        broker
          .acls(MATCH_ALL_FILTER)
          .map((binding) => binding.entry.principal)
          .toSorted(),
      ).toEqual(principals.toSorted());
  });

  test('creates and deletes racing on shared records: no lost update, every deletion reported, brokers converge', async () => {
    const { store, acls: stores } = brokers(3, new MemoryStore({ latency: 's3-express', seed: 11 }));
    const [a, b, c] = stores as [AclStore, AclStore, AclStore];
    await Promise.all(stores.map((s) => s.refresh()));
    const names = ['t0', 't1', 't2'];
    const keepers: AclBinding[] = [];
    const victims: AclBinding[] = [];
    const work: Promise<unknown>[] = [];
    for (let round = 0; round < 8; round++) {
      for (const name of names) {
        const keeper = acl({ resourceType: TOPIC, name, principal: `User:keeper-${round}` });
        const victim = acl({
          resourceType: TOPIC,
          name,
          principal: 'User:victim',
          operation: [AclOperation.READ, AclOperation.WRITE, AclOperation.CREATE, AclOperation.DELETE, AclOperation.ALTER, AclOperation.DESCRIBE, AclOperation.ALL, AclOperation.CLUSTER_ACTION][
            round
          ]!,
        });
        keepers.push(keeper);
        victims.push(victim);
        work.push((round % 2 === 0 ? a : b).create([keeper, victim]));
      }
      work.push(c.delete([filterOf({ principal: 'User:victim' })]));
    }
    const outcomes = await Promise.all(work);
    const reported = outcomes.filter((outcome): outcome is { deletions: { binding: AclBinding }[] }[] => Array.isArray(outcome) && 'deletions' in (outcome[0] ?? {}));
    const deletedVictims = reported.flatMap((results) => results.flatMap((r) => r.deletions.map((d) => d.binding)));
    expect(outcomes.flat().every((outcome) => (outcome as { error: unknown }).error === null)).toBe(true);
    expect(store.stats().errors.PreconditionFailed).toBeGreaterThan(0);
    await Promise.all(stores.map((s) => s.refresh()));
    const fresh = new AclStore(new ControlStore(store, 'cluster'), new Authorizer());
    await fresh.refresh();
    const final = fresh.acls(MATCH_ALL_FILTER);
    for (const s of stores) expect(s.acls(MATCH_ALL_FILTER)).toEqual(final);
    const has = (list: readonly AclBinding[], binding: AclBinding): boolean => list.some((x) => samePattern(x.pattern, binding.pattern) && sameEntry(x.entry, binding.entry));
    for (const keeper of keepers) expect(has(final, keeper)).toBe(true);
    for (const victim of victims) expect(has(final, victim) !== has(deletedVictims, victim)).toBe(true);
    expect(deletedVictims.length).toBe(new Set(deletedVictims.map((v) => bindingText(v))).size);
  });
});

describe('store failures', () => {
  test('a failed write is an error result, not a success, and the authorizer does not change', async () => {
    const {
      store,
      acls: [a],
    } = brokers(1);
    await a!.refresh();
    store.injectFault({ operation: 'put', kind: 'Unavailable', count: 100 });
    const [created] = await a!.create([acl({ resourceType: TOPIC, name: 't' })]);
    expect(created!.error?.kind).toBe('Storage');
    expect(created!.error!.message).toContain('Unavailable');
    expect(a!.authorizer.authorize(alice, AclOperation.READ, TOPIC, 't')).toBe(false);
  });

  test('a failed delete is an error on each ACL it matched; a failed refresh fails the whole filter', async () => {
    const {
      store,
      acls: [a],
    } = brokers(1);
    const binding = acl({ resourceType: TOPIC, name: 't' });
    await a!.create([binding]);
    store.injectFault({ operation: 'put', kind: 'Throttled', count: 100 });
    const [failed] = await a!.delete([filterOf({})]);
    expect(failed!.error).toBeNull();
    expect(failed!.deletions).toHaveLength(1);
    expect(failed!.deletions[0]!.binding).toEqual(binding);
    expect(failed!.deletions[0]!.error?.kind).toBe('Storage');
    store.injectFault({ operation: 'list', kind: 'Unavailable' });
    const [unlisted] = await a!.delete([filterOf({})]);
    expect(unlisted!.error?.kind).toBe('Storage');
    expect(unlisted!.deletions).toEqual([]);
    expect(a!.authorizer.authorize(alice, AclOperation.READ, TOPIC, 't')).toBe(true);
  });

  test('a refresh that cannot read everything throws and keeps the last complete view', async () => {
    const {
      store,
      acls: [a, b],
    } = brokers(2);
    await a!.create([acl({ resourceType: TOPIC, name: 't' })]);
    await b!.refresh();
    await a!.create([acl({ resourceType: TOPIC, name: 'u' }), acl({ resourceType: TOPIC, name: 't', permissionType: AclPermissionType.DENY })]);
    store.injectFault({ operation: 'get', kind: 'Unavailable', keyPrefix: `${RECORDS}TOPIC/LITERAL/t` });
    await expect(b!.refresh()).rejects.toThrow('Unavailable');
    expect(b!.authorizer.authorize(alice, AclOperation.READ, TOPIC, 't')).toBe(true); // not a half view
    await b!.refresh();
    expect(b!.authorizer.authorize(alice, AclOperation.READ, TOPIC, 't')).toBe(false);
    expect(b!.authorizer.authorize(alice, AclOperation.READ, TOPIC, 'u')).toBe(true);
  });

  test('a record Ferry could not have written fails the refresh as CorruptObject', async () => {
    const {
      store,
      acls: [a],
    } = brokers(1);
    await store.put(`${RECORDS}TOPIC/LITERAL/t`, new TextEncoder().encode(JSON.stringify({ version: 1, acls: [{ principal: 'User:a', host: '*', operation: 'ANY', permissionType: 'ALLOW' }] })));
    const error = await a!.refresh().catch((e: unknown) => e);
    expect(isFerryError(error, 'CorruptObject')).toBe(true);
    expect(a!.authorizer.ready).toBe(false);
  });
});
