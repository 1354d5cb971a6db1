// Kafka's refusals of AlterClientQuotas entries (ClientQuotaControlManager) and of describe filters
// (ClientQuotasImage.describe), with Kafka's codes and messages.
import { describe, expect, test } from 'bun:test';
import type { QuotaKey } from '../../../src/security/quotas/model.ts';
import { QUOTA_RECORD_NAME_KEY_CHARS_MAX } from '../../../src/security/quotas/record.ts';
import { checkAlteration, checkFilter, type QuotaAlterationRequest, QuotaErrorCode } from '../../../src/security/quotas/validate.ts';

const user = (entityName: string | null) => ({ entityType: 'user', entityName });
const client = (entityName: string | null) => ({ entityType: 'client-id', entityName });
const ip = (entityName: string | null) => ({ entityType: 'ip', entityName });
const set = (key: string, value: number) => ({ key, value, remove: false });
const remove = (key: string) => ({ key, value: 0, remove: true });

function refusal(entry: QuotaAlterationRequest): string | null {
  const checked = checkAlteration(entry);
  if (!('errorCode' in checked)) return null;
  expect(checked.errorCode).toBe(QuotaErrorCode.INVALID_REQUEST);
  return checked.errorMessage;
}

describe('alterations', () => {
  test('valid changes: sets and removals; removing a key Kafka does not know changes nothing', () => {
    const checked = checkAlteration({
      entity: [user('alice'), client(null)],
      ops: [set('producer_byte_rate', 1024), remove('consumer_byte_rate'), set('request_percentage', 12.5), remove('no-such-key')],
    });
    expect(checked).toEqual({
      entity: { user: 'alice', 'client-id': null },
      ops: new Map<QuotaKey, number | null>([
        ['producer_byte_rate', 1024],
        ['consumer_byte_rate', null],
        ['request_percentage', 12.5],
      ]),
    });
  });

  test('a type named twice keeps its last name (AlterClientQuotasRequest.entries reads a map)', () => {
    expect(checkAlteration({ entity: [user('a'), user('b')], ops: [] })).toEqual({ entity: { user: 'b' }, ops: new Map() });
  });

  test('entities Kafka refuses', () => {
    expect(refusal({ entity: [], ops: [set('producer_byte_rate', 1)] })).toBe('Invalid empty client quota entity');
    expect(refusal({ entity: [{ entityType: '', entityName: 'name' }], ops: [] })).toBe('Unhandled client quota entity type: ');
    expect(refusal({ entity: [{ entityType: 'group', entityName: 'g' }], ops: [] })).toBe('Unhandled client quota entity type: group');
    expect(refusal({ entity: [user('')], ops: [] })).toBe('Empty user not supported');
    expect(refusal({ entity: [client('')], ops: [] })).toBe('Empty client-id not supported');
    expect(refusal({ entity: [ip('10.0.0.1'), user('alice')], ops: [] })).toBe('Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId');
    expect(refusal({ entity: [client(null), ip(null)], ops: [] })).toBe('Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId');
    expect(refusal({ entity: [ip('not an address')], ops: [] })).toBe('not an address is not a valid IP or resolvable host.');
  });

  test('keys and values Kafka refuses, checked after the entity', () => {
    expect(refusal({ entity: [user('alice')], ops: [set('bad', 1)] })).toBe('Invalid configuration key bad');
    expect(refusal({ entity: [user('alice')], ops: [set('producer_byte_rate', 0)] })).toBe('Quota producer_byte_rate must be greater than 0');
    expect(refusal({ entity: [user('alice')], ops: [set('request_percentage', -1)] })).toBe('Quota request_percentage must be greater than 0');
    expect(refusal({ entity: [user('alice')], ops: [set('producer_byte_rate', 10000.5)] })).toBe('producer_byte_rate cannot be a fractional value.');
    expect(refusal({ entity: [user('alice')], ops: [set('consumer_byte_rate', 2 ** 64)] })).toBe('Proposed value for consumer_byte_rate is too large for a LONG.');
    expect(refusal({ entity: [user('alice')], ops: [set('producer_byte_rate', 1), set('producer_byte_rate', 2)] })).toBe(
      'Duplicate quota key producer_byte_rate not updating quota for this entity ClientQuotaEntity(entries={user=alice})',
    );
    expect(refusal({ entity: [user('alice'), client('app')], ops: [remove('request_percentage'), set('request_percentage', 2)] })).toBe(
      'Duplicate quota key request_percentage not updating quota for this entity ClientQuotaEntity(entries={client-id=app, user=alice})',
    );
    // A fractional request percentage is fine: a DOUBLE.
    expect(refusal({ entity: [user('alice')], ops: [set('request_percentage', 0.25)] })).toBeNull();
  });

  test('keys Kafka takes but Ferry does not enforce are refused as Kafka refuses a key it does not know', () => {
    expect(refusal({ entity: [user('alice')], ops: [set('controller_mutation_rate', 10)] })).toBe('Invalid configuration key controller_mutation_rate');
    expect(refusal({ entity: [ip('10.0.0.1')], ops: [set('connection_creation_rate', 10)] })).toBe('Invalid configuration key connection_creation_rate');
    expect(refusal({ entity: [ip(null)], ops: [set('producer_byte_rate', 10)] })).toBe('Invalid configuration key producer_byte_rate');
  });

  test('beyond Kafka: values JSON cannot hold, names no record key can hold', () => {
    expect(refusal({ entity: [user('alice')], ops: [set('request_percentage', Number.POSITIVE_INFINITY)] })).toBe('Quota request_percentage must be a finite number');
    expect(refusal({ entity: [user('alice')], ops: [set('request_percentage', Number.NaN)] })).toBe('Quota request_percentage must be a finite number');
    expect(refusal({ entity: [client('x'.repeat(QUOTA_RECORD_NAME_KEY_CHARS_MAX + 1))], ops: [] })).toContain('Entity name too long');
    expect(refusal({ entity: [user('\ud800')], ops: [] })).toBe('Entity name is not well-formed Unicode');
  });
});

describe('describe filters', () => {
  const component = (entityType: string, matchType: number, match: string | null) => ({ entityType, matchType, match });

  test("Kafka's refusals, in its order", () => {
    const error = (components: ReturnType<typeof component>[]) => {
      const checked = checkFilter(components, false);
      return 'errorCode' in checked ? [checked.errorCode, checked.errorMessage] : null;
    };
    const INVALID = QuotaErrorCode.INVALID_REQUEST;
    expect(error([component('', 0, 'x')])).toEqual([INVALID, 'Invalid empty entity type.']);
    expect(error([component('user', 0, 'a'), component('user', 2, null)])).toEqual([INVALID, 'Entity type user cannot appear more than once in the filter.']);
    expect(error([component('group', 0, 'g')])).toEqual([QuotaErrorCode.UNSUPPORTED_VERSION, 'Unsupported entity type group']);
    expect(error([component('user', 0, null)])).toEqual([INVALID, 'Request specified MATCH_TYPE_EXACT, but set match string to null.']);
    expect(error([component('user', 1, 'a')])).toEqual([INVALID, 'Request specified MATCH_TYPE_DEFAULT, but also specified a match string.']);
    expect(error([component('user', 2, 'a')])).toEqual([INVALID, 'Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.']);
    expect(error([component('user', 3, null)])).toEqual([INVALID, 'Unknown match type 3']);
    expect(error([component('ip', 2, null), component('client-id', 0, 'c')])).toEqual([
      INVALID,
      'Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.',
    ]);
    expect(error([component('ip', 1, null)])).toBeNull();
  });
});
