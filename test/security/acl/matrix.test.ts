// The ACL matrix: one ACL of every operation × resource type × pattern type × permission ×
// principal (named or `User:*`) × host (exact or `*`), checked against every operation on a set
// of names, principals and hosts; then random ACL sets (fast-check) against the reference.
import { describe, expect, test } from 'bun:test';
import fc from 'fast-check';
import { Authorizer } from '../../../src/security/acl/authorizer.ts';
import {
  ACL_OPERATIONS,
  type AclBinding,
  AclOperation,
  AclPermissionType,
  PatternType,
  RESOURCE_TYPES,
  ResourceType,
  resourceTypeName,
  samePattern,
  STORED_PATTERN_TYPES,
} from '../../../src/security/acl/model.ts';
import { acl, resourcesOf, session } from './helpers.ts';
import { type ReferenceConfig, referenceAuthorize, referenceAuthorizeByResourceType } from './reference.ts';

const REQUESTED_OPERATIONS = ACL_OPERATIONS.filter((operation) => operation !== AclOperation.ALL);
const PRINCIPALS = ['User:alice', 'User:bob'];
const HOSTS = ['10.0.0.1', '10.0.0.2'];
/** The ACL names `orders`; these names are: the same, one it is a prefix of, an unrelated one, a different case. */
const NAMES = ['orders', 'orders-eu', 'payments', 'Orders'];
const NO_DEFAULTS: ReferenceConfig = { superUsers: [], allowEveryoneIfNoAclFound: false };

function authorizerWith(bindings: readonly AclBinding[], config: ReferenceConfig = NO_DEFAULTS): Authorizer {
  const authorizer = new Authorizer({ superUsers: config.superUsers, allowEveryoneIfNoAclFound: config.allowEveryoneIfNoAclFound });
  authorizer.load(resourcesOf(bindings));
  return authorizer;
}

describe('one ACL against every request', () => {
  for (const resourceType of RESOURCE_TYPES) {
    test(`${resourceTypeName(resourceType)}: every operation, pattern, permission, principal and host`, () => {
      let checks = 0;
      for (const operation of ACL_OPERATIONS) {
        for (const patternType of STORED_PATTERN_TYPES) {
          for (const permissionType of [AclPermissionType.ALLOW, AclPermissionType.DENY]) {
            for (const principal of ['User:alice', 'User:*']) {
              for (const host of ['10.0.0.1', '*']) {
                const binding = acl({ resourceType, name: 'orders', patternType, principal, host, operation, permissionType });
                for (const allowEveryoneIfNoAclFound of [false, true]) {
                  const config = { superUsers: [], allowEveryoneIfNoAclFound };
                  const authorizer = authorizerWith([binding], config);
                  for (const queryType of [resourceType, resourceType === ResourceType.TOPIC ? ResourceType.GROUP : ResourceType.TOPIC]) {
                    for (const asked of REQUESTED_OPERATIONS) {
                      for (const name of NAMES) {
                        for (const who of PRINCIPALS) {
                          for (const from of HOSTS) {
                            const query = { principal: who, host: from, operation: asked, resourceType: queryType, resourceName: name };
                            const expected = referenceAuthorize([binding], config, query);
                            const actual = authorizer.authorize(session(who, from), asked, queryType, name);
                            if (actual !== expected) throw new Error(`${JSON.stringify({ binding, query, allowEveryoneIfNoAclFound })}: ${actual}, expected ${expected}`);
                            checks++;
                          }
                        }
                      }
                    }
                  }
                }
              }
            }
          }
        }
      }
      expect(checks).toBe(ACL_OPERATIONS.length * 2 * 2 * 2 * 2 * 2 * 2 * REQUESTED_OPERATIONS.length * NAMES.length * PRINCIPALS.length * HOSTS.length);
    });
  }

  test('an ALLOW of one operation beside a DENY of another, for every pair and every operation asked', () => {
    for (const allowed of ACL_OPERATIONS) {
      for (const denied of ACL_OPERATIONS) {
        const bindings = [
          acl({ resourceType: ResourceType.TOPIC, name: 'orders', operation: allowed }),
          acl({ resourceType: ResourceType.TOPIC, name: 'ord', patternType: PatternType.PREFIXED, operation: denied, permissionType: AclPermissionType.DENY }),
        ];
        const authorizer = authorizerWith(bindings);
        for (const asked of REQUESTED_OPERATIONS) {
          const query = { principal: 'User:alice', host: '10.0.0.1', operation: asked, resourceType: ResourceType.TOPIC, resourceName: 'orders' };
          expect({ allowed, denied, asked, decision: authorizer.authorize(session('User:alice'), asked, ResourceType.TOPIC, 'orders') }).toEqual({
            allowed,
            denied,
            asked,
            decision: referenceAuthorize(bindings, NO_DEFAULTS, query),
          });
        }
      }
    }
  });

  test('the matrix holds the documented rules, not only the reference', () => {
    const read = acl({ resourceType: ResourceType.TOPIC, name: 'orders' });
    const authorizer = authorizerWith([read]);
    expect(authorizer.authorize(session('User:alice'), AclOperation.READ, ResourceType.TOPIC, 'orders')).toBe(true);
    expect(authorizer.authorize(session('User:alice'), AclOperation.DESCRIBE, ResourceType.TOPIC, 'orders')).toBe(true); // implied
    expect(authorizer.authorize(session('User:alice'), AclOperation.WRITE, ResourceType.TOPIC, 'orders')).toBe(false);
    expect(authorizer.authorize(session('User:alice'), AclOperation.READ, ResourceType.TOPIC, 'Orders')).toBe(false); // case-sensitive
    expect(authorizer.authorize(session('User:alice'), AclOperation.READ, ResourceType.TOPIC, 'orders-eu')).toBe(false); // literal is not a prefix
    expect(authorizer.authorize(session('User:bob'), AclOperation.READ, ResourceType.TOPIC, 'orders')).toBe(false);
    expect(authorizer.authorize(session('User:alice'), AclOperation.READ, ResourceType.GROUP, 'orders')).toBe(false);
  });
});

const NAME_POOL = ['a', 'ab', 'abc', 'b', 'A', '*', 'a*'];
const arbitraryAcl: fc.Arbitrary<AclBinding> = fc
  .record({
    resourceType: fc.constantFrom(ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER),
    name: fc.constantFrom(...NAME_POOL),
    patternType: fc.constantFrom(...STORED_PATTERN_TYPES),
    principal: fc.constantFrom('User:alice', 'User:bob', 'User:*', 'Group:alice'),
    host: fc.constantFrom('*', '10.0.0.1', '10.0.0.2'),
    operation: fc.constantFrom(...ACL_OPERATIONS),
    permissionType: fc.constantFrom(AclPermissionType.ALLOW, AclPermissionType.DENY),
  })
  .map(acl);
const arbitraryConfig: fc.Arbitrary<ReferenceConfig> = fc.record({
  superUsers: fc.subarray(['User:admin', 'User:bob']),
  allowEveryoneIfNoAclFound: fc.boolean(),
});
const arbitraryQuery = fc.record({
  principal: fc.constantFrom('User:alice', 'User:bob', 'User:admin', 'User:carol'),
  host: fc.constantFrom('10.0.0.1', '10.0.0.2'),
  operation: fc.constantFrom(...REQUESTED_OPERATIONS),
  resourceType: fc.constantFrom(ResourceType.TOPIC, ResourceType.GROUP, ResourceType.CLUSTER),
  resourceName: fc.constantFrom(...NAME_POOL, 'abcd', 'ba', 'hardcode', ''),
});

describe('random ACL sets (fast-check) against the reference', () => {
  test('authorize', () => {
    fc.assert(
      fc.property(fc.array(arbitraryAcl, { maxLength: 24 }), arbitraryConfig, fc.array(arbitraryQuery, { minLength: 1, maxLength: 16 }), (bindings, config, queries) => {
        const authorizer = authorizerWith(bindings, config);
        for (const query of queries) {
          expect(authorizer.authorize(session(query.principal, query.host), query.operation, query.resourceType, query.resourceName)).toBe(referenceAuthorize(bindings, config, query));
        }
      }),
      { numRuns: 1_000 },
    );
  });

  test('authorize, with few patterns, principals and hosts so that ACLs collide', () => {
    const dense = fc
      .record({
        name: fc.constantFrom('a', 'ab', '*'),
        patternType: fc.constantFrom(...STORED_PATTERN_TYPES),
        principal: fc.constantFrom('User:alice', 'User:*'),
        host: fc.constantFrom('*', '10.0.0.1'),
        operation: fc.constantFrom(...ACL_OPERATIONS),
        permissionType: fc.constantFrom(AclPermissionType.ALLOW, AclPermissionType.DENY),
      })
      .map((draft) => acl({ ...draft, resourceType: ResourceType.TOPIC }));
    fc.assert(
      fc.property(fc.array(dense, { maxLength: 8 }), fc.boolean(), (bindings, allowEveryoneIfNoAclFound) => {
        const config = { superUsers: [], allowEveryoneIfNoAclFound };
        const authorizer = authorizerWith(bindings, config);
        for (const operation of REQUESTED_OPERATIONS) {
          for (const resourceName of ['a', 'ab', 'abc', 'b']) {
            const query = { principal: 'User:alice', host: '10.0.0.1', operation, resourceType: ResourceType.TOPIC, resourceName };
            expect(authorizer.authorize(session('User:alice'), operation, ResourceType.TOPIC, resourceName)).toBe(referenceAuthorize(bindings, config, query));
          }
          const query = { principal: 'User:alice', host: '10.0.0.1', operation, resourceType: ResourceType.TOPIC };
          expect(authorizer.authorizeByResourceType(session('User:alice'), operation, ResourceType.TOPIC)).toBe(referenceAuthorizeByResourceType(bindings, config, query));
        }
      }),
      { numRuns: 2_000 },
    );
  });

  test('authorizeByResourceType', () => {
    fc.assert(
      fc.property(fc.array(arbitraryAcl, { maxLength: 24 }), arbitraryConfig, fc.array(arbitraryQuery, { minLength: 1, maxLength: 16 }), (bindings, config, queries) => {
        const authorizer = authorizerWith(bindings, config);
        for (const query of queries) {
          const actual = authorizer.authorizeByResourceType(session(query.principal, query.host), query.operation, query.resourceType);
          expect(actual).toBe(referenceAuthorizeByResourceType(bindings, config, query));
        }
      }),
      { numRuns: 1_000 },
    );
  });

  test('an index changed pattern by pattern decides as one loaded whole', () => {
    const step = fc.record({ binding: arbitraryAcl, add: fc.boolean() });
    fc.assert(
      fc.property(fc.array(step, { maxLength: 40 }), fc.array(arbitraryQuery, { minLength: 1, maxLength: 16 }), (steps, queries) => {
        const incremental = new Authorizer();
        incremental.load([]);
        let current: AclBinding[] = [];
        for (const { binding, add } of steps) {
          const others = current.filter((b) => !samePattern(b.pattern, binding.pattern));
          const same = current.filter((b) => samePattern(b.pattern, binding.pattern)).map((b) => b.entry);
          const entries = add ? [...same, binding.entry] : same.slice(1);
          incremental.setResource(binding.pattern, entries);
          current = [...others, ...entries.map((entry) => ({ pattern: binding.pattern, entry }))];
        }
        expect(incremental.aclCount()).toBe(current.length);
        for (const query of queries) {
          expect(incremental.authorize(session(query.principal, query.host), query.operation, query.resourceType, query.resourceName)).toBe(referenceAuthorize(current, NO_DEFAULTS, query));
          expect(incremental.authorizeByResourceType(session(query.principal, query.host), query.operation, query.resourceType)).toBe(referenceAuthorizeByResourceType(current, NO_DEFAULTS, query));
        }
      }),
      { numRuns: 500 },
    );
  });
});

test('PatternType.MATCH and ANY never reach an authorizer', () => {
  expect(STORED_PATTERN_TYPES).toEqual([PatternType.LITERAL, PatternType.PREFIXED]);
});
