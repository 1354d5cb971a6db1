// Kafka's eight levels of user and client-id quotas (ClientQuotaManager's DefaultQuotaCallback):
// the most specific level with a quota for the key applies, and it decides who shares a rate.
import { describe, expect, test } from 'bun:test';
import { entityId, type EntityQuotas, type QuotaEntity, type QuotaKey } from '../../../src/security/quotas/model.ts';
import { appliedQuota } from '../../../src/security/quotas/precedence.ts';

/** The eight levels' entities for user alice and client id app, numbered as Kafka's doc lists them. */
const LEVEL_ENTITIES: readonly QuotaEntity[] = [
  { user: 'alice', 'client-id': 'app' },
  { user: 'alice', 'client-id': null },
  { user: 'alice' },
  { user: null, 'client-id': 'app' },
  { user: null, 'client-id': null },
  { user: null },
  { 'client-id': 'app' },
  { 'client-id': null },
];

function table(entries: readonly [QuotaEntity, QuotaKey, number][]): (entity: QuotaEntity) => EntityQuotas | undefined {
  const quotas = new Map<string, Map<QuotaKey, number>>();
  for (const [entity, key, value] of entries) {
    const id = entityId(entity);
    quotas.set(id, (quotas.get(id) ?? new Map()).set(key, value));
  }
  return (entity) => quotas.get(entityId(entity));
}

describe('precedence', () => {
  test('each level applies while every more specific one has no quota', () => {
    for (let level = 1; level <= 8; level++) {
      const present = LEVEL_ENTITIES.slice(level - 1).map((entity, index): [QuotaEntity, QuotaKey, number] => [entity, 'producer_byte_rate', (level + index) * 1000]);
      const applied = appliedQuota(table(present), 'producer_byte_rate', 'alice', 'app');
      expect({ level: applied?.level, bound: applied?.bound }).toEqual({ level, bound: level * 1000 });
    }
  });

  test("the level decides whose rate it is: a user's own quota is shared by its client ids, a default never", () => {
    const tagsAt = (level: number) => {
      const applied = appliedQuota(table([[LEVEL_ENTITIES[level - 1]!, 'request_percentage', 10]]), 'request_percentage', 'alice', 'app')!;
      return [applied.sensorUser, applied.sensorClientId];
    };
    expect([1, 2, 3, 4, 5, 6, 7, 8].map(tagsAt)).toEqual([
      ['alice', 'app'],
      ['alice', 'app'],
      ['alice', ''],
      ['alice', 'app'],
      ['alice', 'app'],
      ['alice', ''],
      ['', 'app'],
      ['', 'app'],
    ]);
  });

  test("keys resolve independently: a user's produce quota and a client id's fetch quota both apply", () => {
    const quotas = table([
      [{ user: 'alice' }, 'producer_byte_rate', 100],
      [{ 'client-id': 'app' }, 'consumer_byte_rate', 200],
    ]);
    expect(appliedQuota(quotas, 'producer_byte_rate', 'alice', 'app')).toEqual({ bound: 100, level: 3, sensorUser: 'alice', sensorClientId: '' });
    expect(appliedQuota(quotas, 'consumer_byte_rate', 'alice', 'app')).toEqual({ bound: 200, level: 7, sensorUser: '', sensorClientId: 'app' });
    expect(appliedQuota(quotas, 'request_percentage', 'alice', 'app')).toBeNull();
  });

  test('other users and client ids fall to the defaults; a named quota of someone else does not apply', () => {
    const quotas = table(LEVEL_ENTITIES.map((entity, index): [QuotaEntity, QuotaKey, number] => [entity, 'producer_byte_rate', index + 1]));
    expect(appliedQuota(quotas, 'producer_byte_rate', 'bob', 'app')?.level).toBe(4); // <default> user with client id app
    expect(appliedQuota(quotas, 'producer_byte_rate', 'bob', 'other')?.level).toBe(5);
    expect(appliedQuota(quotas, 'producer_byte_rate', 'alice', 'other')?.level).toBe(2);
  });

  test('a client without a client id matches no level that names one, as in Kafka', () => {
    const all = table(LEVEL_ENTITIES.map((entity, index): [QuotaEntity, QuotaKey, number] => [entity, 'producer_byte_rate', index + 1]));
    expect(appliedQuota(all, 'producer_byte_rate', 'alice', '')?.level).toBe(3);
    const clientLevels = table([
      [{ 'client-id': null }, 'producer_byte_rate', 8],
      [{ user: 'alice', 'client-id': null }, 'producer_byte_rate', 2],
    ]);
    expect(appliedQuota(clientLevels, 'producer_byte_rate', 'alice', '')).toBeNull();
  });

  test('ANONYMOUS is a user like any other: the <default> user quota applies to it', () => {
    const quotas = table([[{ user: null }, 'consumer_byte_rate', 500]]);
    expect(appliedQuota(quotas, 'consumer_byte_rate', 'ANONYMOUS', 'console-consumer')).toEqual({ bound: 500, level: 6, sensorUser: 'ANONYMOUS', sensorClientId: '' });
  });
});
