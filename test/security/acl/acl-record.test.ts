import { expect, test } from 'bun:test';
import fc from 'fast-check';
import { isFerryError } from '../../../src/errors.ts';
import { ACL_RECORD_NAME_KEY_CHARS_MAX, aclRecordKey, decodeAclRecord, encodeAclRecord, recordKeyError } from '../../../src/security/acl/acl-record.ts';
import { ACL_OPERATIONS, AclPermissionType, RESOURCE_TYPES, STORED_PATTERN_TYPES } from '../../../src/security/acl/model.ts';

test('a record reads back as written, whatever the name (fast-check)', () => {
  const entry = fc.record({
    principal: fc.string().map((name) => `User:${name}`),
    host: fc.constantFrom('*', '10.0.0.1', '::1'),
    operation: fc.constantFrom(...ACL_OPERATIONS),
    permissionType: fc.constantFrom(AclPermissionType.ALLOW, AclPermissionType.DENY),
  });
  const pattern = fc.record({ resourceType: fc.constantFrom(...RESOURCE_TYPES), name: fc.string({ unit: 'grapheme', minLength: 1 }), patternType: fc.constantFrom(...STORED_PATTERN_TYPES) });
  fc.assert(
    fc.property(pattern, fc.array(entry, { maxLength: 5 }), (resource, entries) => {
      const key = aclRecordKey(resource);
      expect(key.split('/')).toHaveLength(3);
      const decoded = decodeAclRecord(key, JSON.parse(JSON.stringify(encodeAclRecord(entries))));
      expect(decoded.pattern).toEqual(resource);
      expect(decoded.entries).toEqual(entries);
    }),
  );
});

test('names too long for a record key are refused before any write', () => {
  const pattern = (name: string) => ({ resourceType: RESOURCE_TYPES[0]!, name, patternType: STORED_PATTERN_TYPES[0]! });
  expect(recordKeyError(pattern('a'.repeat(ACL_RECORD_NAME_KEY_CHARS_MAX)))).toBeNull();
  expect(recordKeyError(pattern('/'.repeat(ACL_RECORD_NAME_KEY_CHARS_MAX / 3 + 1)))).toContain('more than 768');
});

test('records Ferry could not have written are CorruptObject', () => {
  const good = { version: 1, acls: [{ principal: 'User:a', host: '*', operation: 'READ', permissionType: 'ALLOW' }] };
  const cases: [string, unknown][] = [
    ['TOPIC/LITERAL', good],
    ['ANY/LITERAL/t', good],
    ['TOPIC/MATCH/t', good],
    ['TOPIC/LITERAL/%E0%A4%A', good],
    ['TOPIC/LITERAL/', good],
    ['TOPIC/LITERAL/t', { version: 2, acls: [] }],
    ['TOPIC/LITERAL/t', null],
    ['TOPIC/LITERAL/t', { version: 1, acls: [{ ...good.acls[0], operation: 'ANY' }] }],
    ['TOPIC/LITERAL/t', { version: 1, acls: [{ ...good.acls[0], permissionType: 'UNKNOWN' }] }],
    ['TOPIC/LITERAL/t', { version: 1, acls: [{ ...good.acls[0], principal: 7 }] }],
  ];
  expect(decodeAclRecord('TOPIC/LITERAL/t', good).entries).toHaveLength(1);
  for (const [key, value] of cases) {
    let error: unknown;
    try {
      decodeAclRecord(key, value);
    } catch (caught) {
      error = caught;
    }
    expect(isFerryError(error, 'CorruptObject')).toBe(true);
  }
});
