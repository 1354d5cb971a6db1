// Kafka's ResourcePatternFilterTest and AclBindingFilterTest cases.
import { expect, test } from 'bun:test';
import { entryFilterMatches, patternFilterMatches } from '../../../src/security/acl/filter.ts';
import { AclOperation, AclPermissionType, PatternType, type ResourcePattern, ResourceType } from '../../../src/security/acl/model.ts';
import { filterError, newAclError } from '../../../src/security/acl/validate.ts';
import { acl } from './helpers.ts';

const { TOPIC, GROUP, ANY } = ResourceType;
const { LITERAL, PREFIXED, MATCH } = PatternType;
const pattern = (name: string, patternType: PatternType, resourceType: ResourceType = TOPIC): ResourcePattern => ({ resourceType, name, patternType });

test('a MATCH filter selects the patterns that apply to its name: itself, the literal *, its prefixes', () => {
  const filter = { resourceType: TOPIC, name: 'Name', patternType: MATCH } as const;
  expect(patternFilterMatches(filter, pattern('Name', LITERAL))).toBe(true);
  expect(patternFilterMatches(filter, pattern('*', LITERAL))).toBe(true);
  expect(patternFilterMatches(filter, pattern('Na', PREFIXED))).toBe(true);
  expect(patternFilterMatches(filter, pattern('Name', PREFIXED))).toBe(true);
  expect(patternFilterMatches(filter, pattern('Name1', PREFIXED))).toBe(false);
  expect(patternFilterMatches(filter, pattern('Nam', LITERAL))).toBe(false);
  expect(patternFilterMatches(filter, pattern('name', LITERAL))).toBe(false);
  expect(patternFilterMatches(filter, pattern('Name', LITERAL, GROUP))).toBe(false);
});

test('an ANY filter selects exactly its name in any pattern type; LITERAL and PREFIXED only their own', () => {
  const any = { resourceType: TOPIC, name: 'Name', patternType: PatternType.ANY } as const;
  expect(patternFilterMatches(any, pattern('Name', LITERAL))).toBe(true);
  expect(patternFilterMatches(any, pattern('Name', PREFIXED))).toBe(true);
  expect(patternFilterMatches(any, pattern('*', LITERAL))).toBe(false);
  expect(patternFilterMatches(any, pattern('Na', PREFIXED))).toBe(false);
  expect(patternFilterMatches({ resourceType: TOPIC, name: '*', patternType: LITERAL }, pattern('*', LITERAL))).toBe(true);
  expect(patternFilterMatches({ resourceType: TOPIC, name: '*', patternType: LITERAL }, pattern('Name', LITERAL))).toBe(false);
  expect(patternFilterMatches({ resourceType: TOPIC, name: 'Name', patternType: PREFIXED }, pattern('Name', LITERAL))).toBe(false);
});

test('a null name and ANY resource type match every pattern', () => {
  for (const patternType of [PatternType.ANY, MATCH]) {
    expect(patternFilterMatches({ resourceType: ANY, name: null, patternType }, pattern('x', PREFIXED, GROUP))).toBe(true);
  }
  expect(patternFilterMatches({ resourceType: ANY, name: null, patternType: LITERAL }, pattern('x', PREFIXED))).toBe(false);
});

test('entry filters compare principal and host exactly; ANY operation and permission match all', () => {
  const entry = acl({ resourceType: TOPIC, name: 't', principal: 'User:*', host: '*' }).entry;
  const any = { principal: null, host: null, operation: AclOperation.ANY, permissionType: AclPermissionType.ANY };
  expect(entryFilterMatches(any, entry)).toBe(true);
  expect(entryFilterMatches({ ...any, principal: 'User:alice' }, entry)).toBe(false);
  expect(entryFilterMatches({ ...any, principal: 'User:*', host: '*' }, entry)).toBe(true);
  expect(entryFilterMatches({ ...any, host: '10.0.0.1' }, entry)).toBe(false);
  expect(entryFilterMatches({ ...any, operation: AclOperation.WRITE }, entry)).toBe(false);
  expect(entryFilterMatches({ ...any, operation: AclOperation.READ, permissionType: AclPermissionType.ALLOW }, entry)).toBe(true);
  expect(entryFilterMatches({ ...any, permissionType: AclPermissionType.DENY }, entry)).toBe(false);
});

test("AclControlManager's validation, with its messages", () => {
  const valid = acl({ resourceType: TOPIC, name: 't' });
  expect(newAclError(valid)).toBeNull();
  expect(newAclError({ ...valid, pattern: { ...valid.pattern, resourceType: ANY } })).toBe('Invalid resourceType ANY');
  expect(newAclError({ ...valid, pattern: { ...valid.pattern, resourceType: ResourceType.UNKNOWN } })).toBe('Invalid resourceType UNKNOWN');
  expect(newAclError({ ...valid, pattern: { ...valid.pattern, patternType: MATCH } })).toBe('Invalid patternType MATCH');
  expect(newAclError({ ...valid, pattern: { ...valid.pattern, patternType: PatternType.ANY } })).toBe('Invalid patternType ANY');
  expect(newAclError({ ...valid, entry: { ...valid.entry, operation: AclOperation.ANY } })).toBe('Invalid operation ANY');
  expect(newAclError({ ...valid, entry: { ...valid.entry, permissionType: AclPermissionType.ANY } })).toBe('Invalid permissionType ANY');
  expect(newAclError({ ...valid, pattern: { ...valid.pattern, name: '' } })).toBe('Resource name should not be empty');
  expect(newAclError({ ...valid, entry: { ...valid.entry, principal: 'alice' } })).toBe(
    'Could not parse principal from `alice` (no colon is present separating the principal type from the principal name)',
  );
  expect(newAclError({ ...valid, entry: { ...valid.entry, principal: 'Group:ops' } })).toBeNull();
  const filter = {
    pattern: { resourceType: TOPIC, name: null, patternType: MATCH },
    entry: { principal: null, host: null, operation: AclOperation.ANY, permissionType: AclPermissionType.ANY },
  } as const;
  expect(filterError(filter)).toBeNull();
  expect(filterError({ ...filter, pattern: { ...filter.pattern, patternType: PatternType.UNKNOWN } })).toBe('Unknown patternFilter.');
  expect(filterError({ ...filter, entry: { ...filter.entry, operation: AclOperation.UNKNOWN } })).toBe('Unknown entryFilter.');
});
