import { describe, expect, test } from 'bun:test';
import { isFerryError } from '../../../src/errors.ts';
import { type AuthorizationDecision, Authorizer, authorizerOptionsFromProperties, parseSuperUsers } from '../../../src/security/acl/authorizer.ts';
import { type AclBinding, AclOperation, AclPermissionType, CLUSTER_NAME, MATCH_ALL_FILTER, PatternType, ResourceType } from '../../../src/security/acl/model.ts';
import { AssertionError } from '../../../src/util/assert.ts';
import { acl, resourcesOf, session } from './helpers.ts';

const alice = session('User:alice', '10.0.0.1');
const bob = session('User:bob', '10.0.0.2');
const { TOPIC, GROUP, CLUSTER, TRANSACTIONAL_ID } = ResourceType;
const { READ, WRITE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS, ALTER, DELETE, CREATE, ALL, IDEMPOTENT_WRITE } = AclOperation;

function loaded(bindings: readonly AclBinding[], options: ConstructorParameters<typeof Authorizer>[0] = {}): Authorizer {
  const authorizer = new Authorizer(options);
  authorizer.load(resourcesOf(bindings));
  return authorizer;
}

describe('super users and the default rule', () => {
  test('a super user may do anything, whatever DENY ACLs say; others are denied with no ACLs', () => {
    const authorizer = loaded([acl({ resourceType: TOPIC, name: '*', principal: 'User:*', operation: ALL, permissionType: AclPermissionType.DENY })], {
      superUsers: parseSuperUsers(' User:admin ; ;User:ops'),
    });
    expect(authorizer.authorize(session('User:admin'), WRITE, TOPIC, 'orders')).toBe(true);
    expect(authorizer.authorize(session('User:ops'), ALTER, CLUSTER, CLUSTER_NAME)).toBe(true);
    expect(authorizer.authorize(alice, READ, TOPIC, 'orders')).toBe(false);
    expect(authorizer.authorize(session('User:ADMIN'), READ, TOPIC, 'orders')).toBe(false); // principals are case-sensitive
  });

  test('super.users must name principals with a type; allow.everyone.if.no.acl.found reads true in any case', () => {
    expect(() => parseSuperUsers('User:admin;admin')).toThrow('expected a string in format principalType:principalName but got admin');
    try {
      parseSuperUsers('admin');
    } catch (error) {
      expect(isFerryError(error, 'InvalidConfig')).toBe(true);
    }
    expect(authorizerOptionsFromProperties({ 'super.users': 'User:a;User:b', 'allow.everyone.if.no.acl.found': ' TRUE ' })).toEqual({
      superUsers: ['User:a', 'User:b'],
      allowEveryoneIfNoAclFound: true,
    });
    expect(authorizerOptionsFromProperties({})).toEqual({ superUsers: [], allowEveryoneIfNoAclFound: false });
  });

  test('allow.everyone.if.no.acl.found allows only on resources that no ACL names, whoever it is for', () => {
    const authorizer = loaded(
      [acl({ resourceType: TOPIC, name: 'secret', principal: 'User:bob' }), acl({ resourceType: TOPIC, name: 'team-', patternType: PatternType.PREFIXED, principal: 'User:bob' })],
      {
        allowEveryoneIfNoAclFound: true,
      },
    );
    expect(authorizer.authorize(alice, WRITE, TOPIC, 'public')).toBe(true);
    expect(authorizer.authorize(alice, READ, GROUP, 'secret')).toBe(true); // another resource type
    expect(authorizer.authorize(alice, READ, TOPIC, 'secret')).toBe(false);
    expect(authorizer.authorize(alice, READ, TOPIC, 'team-a')).toBe(false); // a prefix ACL names it
    expect(loaded([]).authorize(alice, READ, TOPIC, 'public')).toBe(false); // default false
  });

  test('before the ACLs are loaded everyone but super users is denied, even with allow.everyone.if.no.acl.found', () => {
    const authorizer = new Authorizer({ superUsers: ['User:admin'], allowEveryoneIfNoAclFound: true });
    expect(authorizer.ready).toBe(false);
    expect(authorizer.authorize(alice, READ, TOPIC, 'orders')).toBe(false);
    expect(authorizer.authorizeByResourceType(alice, READ, TOPIC)).toBe(false);
    expect(authorizer.authorize(session('User:admin'), READ, TOPIC, 'orders')).toBe(true);
    authorizer.load([]);
    expect(authorizer.authorize(alice, READ, TOPIC, 'orders')).toBe(true);
  });
});

describe('matching', () => {
  test('DENY wins over ALLOW, from any applying pattern', () => {
    const authorizer = loaded([
      acl({ resourceType: TOPIC, name: 'orders', operation: ALL }),
      acl({ resourceType: TOPIC, name: 'ord', patternType: PatternType.PREFIXED, operation: WRITE, permissionType: AclPermissionType.DENY }),
    ]);
    expect(authorizer.authorize(alice, READ, TOPIC, 'orders')).toBe(true);
    expect(authorizer.authorize(alice, WRITE, TOPIC, 'orders')).toBe(false);
  });

  test('implied operations: READ, WRITE, DELETE, ALTER allow DESCRIBE; ALTER_CONFIGS allows DESCRIBE_CONFIGS; a DENY implies nothing', () => {
    for (const operation of [READ, WRITE, DELETE, ALTER]) {
      const authorizer = loaded([acl({ resourceType: TOPIC, name: 't', operation })]);
      expect(authorizer.authorize(alice, DESCRIBE, TOPIC, 't')).toBe(true);
      expect(authorizer.authorize(alice, DESCRIBE_CONFIGS, TOPIC, 't')).toBe(false);
    }
    for (const operation of [CREATE, DESCRIBE_CONFIGS, IDEMPOTENT_WRITE]) expect(loaded([acl({ resourceType: TOPIC, name: 't', operation })]).authorize(alice, DESCRIBE, TOPIC, 't')).toBe(false);
    expect(loaded([acl({ resourceType: TOPIC, name: 't', operation: ALTER_CONFIGS })]).authorize(alice, DESCRIBE_CONFIGS, TOPIC, 't')).toBe(true);
    const deniedRead = loaded([acl({ resourceType: TOPIC, name: 't', operation: DESCRIBE }), acl({ resourceType: TOPIC, name: 't', permissionType: AclPermissionType.DENY })]);
    expect(deniedRead.authorize(alice, DESCRIBE, TOPIC, 't')).toBe(true);
    expect(deniedRead.authorize(alice, READ, TOPIC, 't')).toBe(false);
    const deniedAll = loaded([acl({ resourceType: TOPIC, name: 't', operation: ALL }), acl({ resourceType: TOPIC, name: 't', operation: ALL, permissionType: AclPermissionType.DENY })]);
    expect(deniedAll.authorize(alice, DESCRIBE, TOPIC, 't')).toBe(false);
  });

  test('User:* matches every user, host * every address; an exact host only that address', () => {
    const authorizer = loaded([acl({ resourceType: TOPIC, name: 'a', principal: 'User:*' }), acl({ resourceType: TOPIC, name: 'b', host: '10.0.0.1' })]);
    expect([authorizer.authorize(alice, READ, TOPIC, 'a'), authorizer.authorize(bob, READ, TOPIC, 'a')]).toEqual([true, true]);
    expect(authorizer.authorize(alice, READ, TOPIC, 'b')).toBe(true);
    expect(authorizer.authorize(session('User:alice', '10.0.0.2'), READ, TOPIC, 'b')).toBe(false);
    expect(authorizer.authorize(session('User:*'), READ, TOPIC, 'b')).toBe(false);
  });

  test('an ACL for another principal type never matches a user', () => {
    const authorizer = loaded([acl({ resourceType: TOPIC, name: 't', principal: 'Group:alice' })]);
    expect(authorizer.authorize(alice, READ, TOPIC, 't')).toBe(false);
  });

  test('the literal * names every resource of its type; a PREFIXED * only names starting with *', () => {
    const authorizer = loaded([acl({ resourceType: GROUP, name: '*' }), acl({ resourceType: TOPIC, name: '*', patternType: PatternType.PREFIXED })]);
    expect(authorizer.authorize(alice, READ, GROUP, 'anything')).toBe(true);
    expect(authorizer.authorize(alice, READ, TRANSACTIONAL_ID, 'anything')).toBe(false);
    expect(authorizer.authorize(alice, READ, TOPIC, 'anything')).toBe(false);
    expect(authorizer.authorize(alice, READ, TOPIC, '*x')).toBe(true);
  });

  test('prefixes of many lengths; names are case-sensitive', () => {
    const authorizer = loaded(['a', 'ab-', 'abc-d', 'x'].map((name) => acl({ resourceType: TOPIC, name, patternType: PatternType.PREFIXED, principal: `User:${name}` })));
    expect(authorizer.authorize(session('User:ab-'), READ, TOPIC, 'ab-c')).toBe(true);
    expect(authorizer.authorize(session('User:abc-d'), READ, TOPIC, 'abc-d')).toBe(true); // a prefix equal to the whole name
    expect(authorizer.authorize(session('User:abc-d'), READ, TOPIC, 'abc-')).toBe(false);
    expect(authorizer.authorize(session('User:a'), READ, TOPIC, 'abc-d')).toBe(true);
    expect(authorizer.authorize(session('User:a'), READ, TOPIC, 'ABC')).toBe(false);
  });

  test('the ALTER on the cluster the ACL APIs need', () => {
    const authorizer = loaded([acl({ resourceType: CLUSTER, name: CLUSTER_NAME, operation: ALTER })]);
    expect(authorizer.authorize(alice, ALTER, CLUSTER, CLUSTER_NAME)).toBe(true);
    expect(authorizer.authorize(alice, DESCRIBE, CLUSTER, CLUSTER_NAME)).toBe(true);
    expect(authorizer.authorize(bob, DESCRIBE, CLUSTER, CLUSTER_NAME)).toBe(false);
  });
});

// The cases of Kafka's AuthorizerInterfaceDefaultTest / BaseAuthorizerTest for authorizeByResourceType.
describe('authorizeByResourceType', () => {
  const allow = (name: string, patternType: PatternType = PatternType.LITERAL, operation: AclOperation = WRITE): AclBinding => acl({ resourceType: TOPIC, name, patternType, operation });
  const deny = (name: string, patternType: PatternType = PatternType.LITERAL, operation: AclOperation = WRITE): AclBinding =>
    acl({ resourceType: TOPIC, name, patternType, operation, permissionType: AclPermissionType.DENY });

  test('no ACL: denied, unless allow.everyone.if.no.acl.found or a super user', () => {
    expect(loaded([]).authorizeByResourceType(alice, WRITE, TOPIC)).toBe(false);
    expect(loaded([], { allowEveryoneIfNoAclFound: true }).authorizeByResourceType(alice, WRITE, TOPIC)).toBe(true);
    expect(loaded([deny('*')], { superUsers: ['User:alice'] }).authorizeByResourceType(alice, WRITE, TOPIC)).toBe(true);
  });

  test('an ALLOW on some topic allows; a DENY on the same literal or on a prefix of it takes it back', () => {
    expect(loaded([allow('t1')]).authorizeByResourceType(alice, WRITE, TOPIC)).toBe(true);
    expect(loaded([allow('t1'), deny('t1')]).authorizeByResourceType(alice, WRITE, TOPIC)).toBe(false);
    expect(loaded([allow('t1'), deny('t', PatternType.PREFIXED)]).authorizeByResourceType(alice, WRITE, TOPIC)).toBe(false);
    expect(loaded([allow('t1'), deny('t1', PatternType.PREFIXED)]).authorizeByResourceType(alice, WRITE, TOPIC)).toBe(false);
    expect(loaded([allow('t1'), deny('t12', PatternType.PREFIXED)]).authorizeByResourceType(alice, WRITE, TOPIC)).toBe(true);
    expect(loaded([allow('t', PatternType.PREFIXED), deny('t')]).authorizeByResourceType(alice, WRITE, TOPIC)).toBe(true); // a literal DENY does not dominate a prefix
    expect(loaded([allow('t1'), deny('t2')]).authorizeByResourceType(alice, WRITE, TOPIC)).toBe(true);
  });

  test('a DENY on * dominates everything, even an ALLOW on *', () => {
    expect(loaded([allow('*'), allow('t1'), deny('*')]).authorizeByResourceType(alice, WRITE, TOPIC)).toBe(false);
    expect(loaded([allow('*'), deny('t1')]).authorizeByResourceType(alice, WRITE, TOPIC)).toBe(true);
  });

  test('only the operation asked or ALL counts, not implied ones; other principals, hosts and types do not', () => {
    expect(loaded([allow('t1', PatternType.LITERAL, READ)]).authorizeByResourceType(alice, DESCRIBE, TOPIC)).toBe(false);
    expect(loaded([allow('t1', PatternType.LITERAL, ALL)]).authorizeByResourceType(alice, DESCRIBE, TOPIC)).toBe(true);
    expect(loaded([allow('t1'), deny('t1', PatternType.LITERAL, READ)]).authorizeByResourceType(alice, WRITE, TOPIC)).toBe(true);
    expect(loaded([allow('t1')]).authorizeByResourceType(bob, WRITE, TOPIC)).toBe(false);
    expect(loaded([acl({ resourceType: TOPIC, name: 't1', operation: WRITE, host: '10.0.0.9' })]).authorizeByResourceType(alice, WRITE, TOPIC)).toBe(false);
    expect(loaded([allow('t1')]).authorizeByResourceType(alice, WRITE, GROUP)).toBe(false);
  });

  test('ANY and UNKNOWN are programmer errors', () => {
    expect(() => loaded([]).authorizeByResourceType(alice, AclOperation.ANY, TOPIC)).toThrow(AssertionError);
    expect(() => loaded([]).authorizeByResourceType(alice, READ, ResourceType.ANY)).toThrow(AssertionError);
  });
});

describe('the audit hook', () => {
  test("is told every decision with the rule that made it and the caller's logging wishes", () => {
    const decisions: AuthorizationDecision[] = [];
    const denyWrite = acl({ resourceType: TOPIC, name: 'orders', operation: WRITE, permissionType: AclPermissionType.DENY });
    const authorizer = new Authorizer({ superUsers: ['User:admin'], audit: (decision) => decisions.push(decision) });
    authorizer.authorize(alice, READ, TOPIC, 'orders');
    authorizer.load(resourcesOf([acl({ resourceType: TOPIC, name: 'orders' }), denyWrite]));
    authorizer.authorize(alice, READ, TOPIC, 'orders');
    authorizer.authorize(alice, WRITE, TOPIC, 'orders', { logIfDenied: false });
    authorizer.authorize(session('User:admin'), WRITE, TOPIC, 'orders');
    authorizer.authorize(alice, READ, TOPIC, 'payments');
    expect(decisions.map((d) => [d.allowed, d.rule.kind, d.logIfDenied])).toEqual([
      [false, 'NotReady', true],
      [true, 'MatchingAcl', true],
      [false, 'MatchingAcl', false],
      [true, 'SuperUser', true],
      [false, 'DefaultDeny', true],
    ]);
    expect(decisions[2]!.rule).toEqual({ kind: 'MatchingAcl', acl: denyWrite });
    expect([decisions[4]!.session, decisions[4]!.operation, decisions[4]!.resourceType, decisions[4]!.resourceName]).toEqual([alice, READ, TOPIC, 'payments']);
  });
});

describe('listing', () => {
  test('acls(filter) lists by resource type, pattern type and name; aclCount counts entries', () => {
    const bindings = [
      acl({ resourceType: GROUP, name: 'g' }),
      acl({ resourceType: TOPIC, name: 'b' }),
      acl({ resourceType: TOPIC, name: 'a', patternType: PatternType.PREFIXED }),
      acl({ resourceType: TOPIC, name: 'a' }),
      acl({ resourceType: TOPIC, name: 'a', operation: WRITE }),
    ];
    const authorizer = loaded(bindings);
    expect(authorizer.aclCount()).toBe(5);
    expect(authorizer.acls(MATCH_ALL_FILTER)).toEqual([bindings[3]!, bindings[4]!, bindings[1]!, bindings[2]!, bindings[0]!]);
    authorizer.setResource(bindings[3]!.pattern, []);
    expect(authorizer.aclCount()).toBe(3);
    expect(authorizer.authorize(alice, READ, TOPIC, 'a')).toBe(true); // still by the prefix
    authorizer.setResource(bindings[2]!.pattern, []);
    expect(authorizer.authorize(alice, READ, TOPIC, 'a')).toBe(false);
  });
});
