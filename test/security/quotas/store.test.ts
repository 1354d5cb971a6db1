// Client quotas in control records: AlterClientQuotas and DescribeClientQuotas as Kafka's
// ClientQuotasRequestTest drives them, two brokers' stores racing on one entity, damaged records
// and store failures.
import { describe, expect, test } from 'bun:test';
import { decodeControlRecord } from '../../../src/control/control-record.ts';
import { ControlStore } from '../../../src/control/control-store.ts';
import type { QuotaEntityPart } from '../../../src/security/quotas/model.ts';
import { QUOTA_RECORDS_PREFIX } from '../../../src/security/quotas/record.ts';
import { ClientQuotaStore } from '../../../src/security/quotas/store.ts';
import { MatchType, type QuotaFilterComponent, QuotaErrorCode } from '../../../src/security/quotas/validate.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { GatedStore } from '../../support/gated-store.ts';

const PREFIX = 'cluster';
const CONTROL = `${PREFIX}/control/${QUOTA_RECORDS_PREFIX}`;

type Entity = { user?: string | null; clientId?: string | null };

function parts({ user, clientId }: Entity): QuotaEntityPart[] {
  return [...(user === undefined ? [] : [{ entityType: 'user', entityName: user }]), ...(clientId === undefined ? [] : [{ entityType: 'client-id', entityName: clientId }])];
}

/** An AlterClientQuotas entry: a number sets, null removes. */
function entry(entity: Entity, ops: Record<string, number | null>) {
  return { entity: parts(entity), ops: Object.entries(ops).map(([key, value]) => ({ key, value: value ?? 0, remove: value === null })) };
}

function twoBrokers(memory: MemoryStore | GatedStore = new MemoryStore()) {
  const store = memory instanceof GatedStore ? memory.store : memory;
  const logs: string[] = [];
  const log = (line: string) => logs.push(line);
  return { logs, a: new ClientQuotaStore(new ControlStore(store, PREFIX), { log }), b: new ClientQuotaStore(new ControlStore(store, PREFIX), { log }) };
}

/** The entity's quotas as an exact (strict) describe answers them; {} when it has none. */
function quotasOf(store: ClientQuotaStore, entity: Entity): Record<string, number> {
  const components = parts(entity).map(({ entityType, entityName }) =>
    entityName === null ? { entityType, matchType: MatchType.DEFAULT, match: null } : { entityType, matchType: MatchType.EXACT, match: entityName },
  );
  const { entries } = store.describe(components, true);
  expect(entries!.length).toBeLessThanOrEqual(1);
  return Object.fromEntries((entries![0]?.values ?? []).map(({ key, value }) => [key, value]));
}

describe('alter then describe (ClientQuotasRequestTest.testAlterClientQuotasRequest)', () => {
  test('set, update, remove, remove what is not set, add back, a mixed change', async () => {
    const { a } = twoBrokers();
    const alice = { user: 'user', clientId: 'client-id' };
    const alter = async (ops: Record<string, number | null>) =>
      expect(await a.alter([entry(alice, ops)], false)).toEqual([
        {
          entity: [
            { entityType: 'client-id', entityName: 'client-id' },
            { entityType: 'user', entityName: 'user' },
          ],
          errorCode: 0,
          errorMessage: null,
        },
      ]);
    expect(quotasOf(a, alice)).toEqual({});
    await alter({ producer_byte_rate: 10000, consumer_byte_rate: 20000 });
    expect(quotasOf(a, alice)).toEqual({ producer_byte_rate: 10000, consumer_byte_rate: 20000 });
    await alter({ producer_byte_rate: 15000 });
    expect(quotasOf(a, alice)).toEqual({ producer_byte_rate: 15000, consumer_byte_rate: 20000 });
    await alter({ producer_byte_rate: null });
    expect(quotasOf(a, alice)).toEqual({ consumer_byte_rate: 20000 });
    await alter({ request_percentage: null });
    expect(quotasOf(a, alice)).toEqual({ consumer_byte_rate: 20000 });
    await alter({ producer_byte_rate: 5000 });
    expect(quotasOf(a, alice)).toEqual({ producer_byte_rate: 5000, consumer_byte_rate: 20000 });
    await alter({ producer_byte_rate: 20000, consumer_byte_rate: null, request_percentage: 12.3 });
    expect(quotasOf(a, alice)).toEqual({ producer_byte_rate: 20000, request_percentage: 12.3 });
    // The last removal leaves the entity out of every answer.
    await alter({ producer_byte_rate: null, request_percentage: null });
    expect(a.describe([], false).entries).toEqual([]);
  });

  test('validateOnly checks and changes nothing (testAlterClientQuotasRequestValidateOnly)', async () => {
    const { a } = twoBrokers();
    await a.alter([entry({ user: 'user' }, { producer_byte_rate: 20000, request_percentage: 23.45 })], false);
    const changes: Record<string, number | null>[] = [
      { consumer_byte_rate: 50000 },
      { producer_byte_rate: 10000 },
      { request_percentage: null },
      { producer_byte_rate: 10000, consumer_byte_rate: 50000, request_percentage: null },
    ];
    for (const ops of changes) {
      expect((await a.alter([entry({ user: 'user' }, ops)], true))[0]!.errorCode).toBe(0);
    }
    expect((await a.alter([entry({ user: 'user' }, { producer_byte_rate: 10000.5 })], true))[0]).toMatchObject({
      errorCode: QuotaErrorCode.INVALID_REQUEST,
      errorMessage: 'producer_byte_rate cannot be a fractional value.',
    });
    expect(quotasOf(a, { user: 'user' })).toEqual({ producer_byte_rate: 20000, request_percentage: 23.45 });
  });

  test('one result per entity, in the order named: a refused entity changes nothing, the others are changed', async () => {
    const { a } = twoBrokers();
    const results = await a.alter([entry({ user: 'a' }, { producer_byte_rate: 1 }), entry({ clientId: 'c' }, { bad: 1 }), entry({ user: null }, { consumer_byte_rate: 2 })], false);
    expect(results.map((result) => [result.entity, result.errorCode, result.errorMessage])).toEqual([
      [[{ entityType: 'user', entityName: 'a' }], 0, null],
      [[{ entityType: 'client-id', entityName: 'c' }], QuotaErrorCode.INVALID_REQUEST, 'Invalid configuration key bad'],
      [[{ entityType: 'user', entityName: null }], 0, null],
    ]);
    expect(quotasOf(a, { clientId: 'c' })).toEqual({});
    expect(quotasOf(a, { user: null })).toEqual({ consumer_byte_rate: 2 });
  });

  test('an entity named by two entries is refused whole, answered once', async () => {
    const { a } = twoBrokers();
    const results = await a.alter([entry({ user: 'a', clientId: 'c' }, { producer_byte_rate: 1 }), entry({ clientId: 'c', user: 'a' }, { consumer_byte_rate: 2 })], false);
    expect(results).toEqual([
      {
        entity: [
          { entityType: 'client-id', entityName: 'c' },
          { entityType: 'user', entityName: 'a' },
        ],
        errorCode: QuotaErrorCode.INVALID_REQUEST,
        errorMessage: 'Ignoring duplicate entity ClientQuotaEntity(entries={client-id=c, user=a})',
      },
    ]);
    expect(quotasOf(a, { user: 'a', clientId: 'c' })).toEqual({});
  });

  test("records: Kafka's config paths, escaped names, <default> for a default (and a user named <default> apart from it)", async () => {
    const memory = new MemoryStore();
    const { a, b } = twoBrokers(memory);
    await a.alter(
      [entry({ user: 'user with spaces', clientId: null }, { producer_byte_rate: 20000 }), entry({ user: '<default>' }, { consumer_byte_rate: 1 }), entry({ user: null }, { consumer_byte_rate: 2 })],
      false,
    );
    expect(memory.peekKeys(CONTROL)).toEqual([`${CONTROL}users/%3Cdefault%3E`, `${CONTROL}users/<default>`, `${CONTROL}users/user%20with%20spaces/clients/<default>`]);
    expect(decodeControlRecord(memory.peek(`${CONTROL}users/user%20with%20spaces/clients/<default>`)!).value).toEqual({ version: 1, quotas: { producer_byte_rate: 20000 } });
    await b.refresh();
    expect(quotasOf(b, { user: '<default>' })).toEqual({ consumer_byte_rate: 1 });
    expect(quotasOf(b, { user: null })).toEqual({ consumer_byte_rate: 2 });
    expect(quotasOf(b, { user: 'user with spaces', clientId: null })).toEqual({ producer_byte_rate: 20000 });
  });
});

describe('describe filters (ClientQuotasRequestTest.testDescribeClientQuotasMatchExact and MatchPartial)', () => {
  const MATCH_ENTITIES: readonly [Entity, number][] = [
    [{ user: 'user-1', clientId: 'client-id-1' }, 50.5],
    [{ user: 'user-2', clientId: 'client-id-1' }, 51.51],
    [{ user: 'user-3', clientId: 'client-id-2' }, 52.52],
    [{ user: null, clientId: 'client-id-1' }, 53.53],
    [{ user: 'user-1', clientId: null }, 54.54],
    [{ user: 'user-3', clientId: null }, 55.55],
    [{ user: 'user-1' }, 56.56],
    [{ user: 'user-2' }, 57.57],
    [{ user: 'user-3' }, 58.58],
    [{ user: null }, 59.59],
    [{ clientId: 'client-id-2' }, 60.6],
  ];

  async function matchStore(): Promise<ClientQuotaStore> {
    const { a, b } = twoBrokers();
    const results = await a.alter(
      MATCH_ENTITIES.map(([entity, value]) => entry(entity, { request_percentage: value })),
      false,
    );
    expect(results.every((result) => result.errorCode === 0)).toBe(true);
    await b.refresh();
    return b;
  }

  const exact = (entityType: string, match: string): QuotaFilterComponent => ({ entityType, matchType: MatchType.EXACT, match });
  const byDefault = (entityType: string): QuotaFilterComponent => ({ entityType, matchType: MatchType.DEFAULT, match: null });
  const any = (entityType: string): QuotaFilterComponent => ({ entityType, matchType: MatchType.SPECIFIED, match: null });

  /** The request_percentage values the filter selects, sorted (each entity's value is its name here). */
  function selected(store: ClientQuotaStore, components: QuotaFilterComponent[], strict: boolean): number[] {
    const result = store.describe(components, strict);
    expect(result.errorCode).toBe(0);
    return result.entries!.map((e) => e.values.find((v) => v.key === 'request_percentage')!.value).sort((x, y) => x - y);
  }

  test('every entity is found by its exact (strict) filter, and only it', async () => {
    const store = await matchStore();
    for (const [entity, value] of MATCH_ENTITIES) expect(quotasOf(store, entity)).toEqual({ request_percentage: value });
    for (const missing of [
      { user: 'user-1', clientId: 'client-id-2' },
      { user: 'user-3', clientId: 'client-id-1' },
      { user: 'user-2', clientId: null },
      { user: 'user-4' },
      { user: null, clientId: 'client-id-2' },
      { clientId: 'client-id-1' },
      { clientId: 'client-id-3' },
    ]) {
      expect(quotasOf(store, missing)).toEqual({});
    }
  });

  test("open and closed partial matches select what Kafka's test expects", async () => {
    const store = await matchStore();
    expect(selected(store, [exact('user', 'user-1')], false)).toEqual([50.5, 54.54, 56.56]);
    expect(selected(store, [exact('user', 'unknown')], false)).toEqual([]);
    expect(selected(store, [exact('client-id', 'client-id-2')], false)).toEqual([52.52, 60.6]);
    expect(selected(store, [byDefault('user')], false)).toEqual([53.53, 59.59]);
    expect(selected(store, [exact('user', 'user-2')], true)).toEqual([57.57]);
    expect(selected(store, [exact('client-id', 'client-id-1')], true)).toEqual([]);
    // "Any specified name" includes the default entity: 4 closed (user-1, -2, -3 and <default>), 10 open.
    expect(selected(store, [any('user')], true)).toEqual([56.56, 57.57, 58.58, 59.59]);
    expect(selected(store, [any('user')], false)).toHaveLength(10);
    expect(selected(store, [any('client-id')], true)).toEqual([60.6]);
    expect(selected(store, [any('client-id')], false)).toHaveLength(7);
    expect(selected(store, [], false)).toHaveLength(11);
    expect(selected(store, [], true)).toEqual([]);
    expect(selected(store, [exact('user', 'user-1'), any('client-id')], false)).toEqual([50.5, 54.54]);
    expect(selected(store, [byDefault('client-id'), any('user')], true)).toEqual([54.54, 55.55]);
  });

  test("answers: the entity's parts (client-id before user, as Kafka's map) and values; a refused filter has no entries", async () => {
    const store = await matchStore();
    expect(store.describe([byDefault('user'), exact('client-id', 'client-id-1')], true)).toEqual({
      errorCode: 0,
      errorMessage: null,
      entries: [
        {
          entity: [
            { entityType: 'client-id', entityName: 'client-id-1' },
            { entityType: 'user', entityName: null },
          ],
          values: [{ key: 'request_percentage', value: 53.53 }],
        },
      ],
    });
    expect(store.describe([{ entityType: 'other', matchType: 0, match: 'name' }], false)).toEqual({
      errorCode: QuotaErrorCode.UNSUPPORTED_VERSION,
      errorMessage: 'Unsupported entity type other',
      entries: null,
    });
  });
});

describe('two brokers', () => {
  test('a change is known at once where it was made, elsewhere after a refresh; removals too', async () => {
    const { a, b } = twoBrokers();
    await a.alter([entry({ user: 'alice' }, { producer_byte_rate: 1000 })], false);
    expect(a.appliedQuota('producer_byte_rate', 'alice', 'app')?.bound).toBe(1000);
    expect(b.appliedQuota('producer_byte_rate', 'alice', 'app')).toBeNull();
    await b.refresh();
    expect(b.appliedQuota('producer_byte_rate', 'alice', 'app')?.bound).toBe(1000);
    await b.alter([entry({ user: 'alice' }, { producer_byte_rate: null })], false);
    await a.refresh();
    expect(a.appliedQuota('producer_byte_rate', 'alice', 'app')).toBeNull();
  });

  test('racing on one entity: both changes land (create and create, then a stale version)', async () => {
    const { a, b } = twoBrokers();
    const [ra, rb] = await Promise.all([a.alter([entry({ clientId: 'app' }, { producer_byte_rate: 1000 })], false), b.alter([entry({ clientId: 'app' }, { consumer_byte_rate: 2000 })], false)]);
    expect([ra[0]!.errorCode, rb[0]!.errorCode]).toEqual([0, 0]);
    // a's view of the record is now stale (b wrote after it, or it after b): its next change reads again.
    await a.alter([entry({ clientId: 'app' }, { request_percentage: 50 })], false);
    await b.alter([entry({ clientId: 'app' }, { request_percentage: 25 })], false);
    await Promise.all([a.refresh(), b.refresh()]);
    for (const store of [a, b]) expect(quotasOf(store, { clientId: 'app' })).toEqual({ producer_byte_rate: 1000, consumer_byte_rate: 2000, request_percentage: 25 });
  });

  test('a write held while another broker changes the entity loses its compare-and-swap, reads again and lands', async () => {
    const gated = new GatedStore();
    const { a, b } = twoBrokers(gated);
    await a.alter([entry({ user: 'alice' }, { producer_byte_rate: 1 })], false);
    await b.refresh();
    const held = gated.holdNext(`${CONTROL}users/alice`);
    const slow = a.alter([entry({ user: 'alice' }, { consumer_byte_rate: 2 })], false);
    await held;
    expect((await b.alter([entry({ user: 'alice' }, { producer_byte_rate: 3 })], false))[0]!.errorCode).toBe(0);
    gated.release(`${CONTROL}users/alice`);
    expect((await slow)[0]!.errorCode).toBe(0);
    await b.refresh();
    expect(quotasOf(b, { user: 'alice' })).toEqual({ producer_byte_rate: 3, consumer_byte_rate: 2 });
  });

  test('a store failure fails only its entity: REQUEST_TIMED_OUT when a write may have taken effect', async () => {
    const gated = new GatedStore();
    const { a, logs } = twoBrokers(gated);
    gated.fail(`${CONTROL}clients/`);
    const results = await a.alter([entry({ clientId: 'app' }, { producer_byte_rate: 1 }), entry({ user: 'alice' }, { producer_byte_rate: 2 })], false);
    expect(results.map((r) => r.errorCode)).toEqual([QuotaErrorCode.REQUEST_TIMED_OUT, 0]);
    expect(results[0]!.errorMessage).toContain('may or may not have taken effect');
    expect(logs.some((line) => line.includes('clients/app'))).toBe(true);
    expect(a.appliedQuota('producer_byte_rate', 'x', 'app')).toBeNull();
  });

  test('a damaged record is left out (logged), its entity answers UNKNOWN_SERVER_ERROR to a change; the rest are read', async () => {
    const memory = new MemoryStore();
    const { a, b, logs } = twoBrokers(memory);
    await a.alter([entry({ user: 'alice' }, { producer_byte_rate: 1 })], false);
    await memory.put(`${CONTROL}users/bob`, new TextEncoder().encode('{"version":1,"quotas":{"producer_byte_rate":"fast"}}'));
    await memory.put(`${CONTROL}somewhere/else/entirely`, new TextEncoder().encode('{}'));
    await b.refresh();
    expect(quotasOf(b, { user: 'alice' })).toEqual({ producer_byte_rate: 1 });
    expect(quotasOf(b, { user: 'bob' })).toEqual({});
    expect(logs.filter((line) => line.includes('users/bob') || line.includes('somewhere/else'))).toHaveLength(2);
    expect((await b.alter([entry({ user: 'bob' }, { producer_byte_rate: 5 })], false))[0]).toMatchObject({ errorCode: QuotaErrorCode.UNKNOWN_SERVER_ERROR });
  });
});
