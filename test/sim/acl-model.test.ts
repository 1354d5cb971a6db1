// Kafka's authorization rules as the simulation's oracle holds them (src/sim/acl-model.ts), where
// each ACL stood over time (acl-timeline.ts), and how old a broker's view may be (view-floor.ts).
import { describe, expect, test } from 'bun:test';
import { type AccessCheck, type AclView, type AuthorizerShape, decide, type Truth } from '../../src/sim/acl-model.ts';
import { aclLives } from '../../src/sim/acl-timeline.ts';
import { presenceOver } from '../../src/sim/presence.ts';
import type { AclChangeOp, Outcome } from '../../src/sim/history.ts';
import type { SimAcl } from '../../src/sim/security-setup.ts';
import { viewFloorOf } from '../../src/sim/view-floor.ts';

const SHAPE: AuthorizerShape = { superUsers: new Set(['User:admin']), allowEveryoneIfNoAclFound: false };
const OPEN: AuthorizerShape = { ...SHAPE, allowEveryoneIfNoAclFound: true };

function acl(permission: SimAcl['permission'], operation: string, resourceName: string, fields: Partial<SimAcl> = {}): SimAcl {
  return { principal: 'User:alice', resourceType: 'topic', resourceName, patternType: 'literal', operation, permission, ...fields };
}

/** A view of these ACLs, each surely there unless given with `null` (maybe). */
function view(...acls: (SimAcl | [SimAcl, Truth])[]): AclView {
  const viewed = acls.map((entry) => (Array.isArray(entry) ? { acl: entry[0], present: entry[1] } : { acl: entry, present: true as Truth }));
  return { ofType: (type) => viewed.filter(({ acl }) => acl.resourceType === type) };
}

const on = (operation: string, resourceName: string, resourceType: SimAcl['resourceType'] = 'topic'): AccessCheck => ({ kind: 'resource', operation, resourceType, resourceName });
const anyTopic = (operation: string): AccessCheck => ({ kind: 'any-of-type', operation, resourceType: 'topic' });
const alice = (check: AccessCheck, acls: AclView, shape = SHAPE) => decide(check, 'User:alice', acls, shape);

describe('decisions on one resource', () => {
  test('an ALLOW allows, a DENY beats it, and nothing at all denies (an authorizer is set)', () => {
    expect(alice(on('WRITE', 'orders'), view(acl('allow', 'WRITE', 'orders')))).toBe(true);
    expect(alice(on('WRITE', 'orders'), view(acl('allow', 'WRITE', 'orders'), acl('deny', 'WRITE', 'orders', { patternType: 'prefixed', resourceName: 'ord' })))).toBe(false);
    expect(alice(on('WRITE', 'orders'), view())).toBe(false);
    expect(alice(on('WRITE', 'orders'), view(acl('allow', 'WRITE', 'orders', { principal: 'User:bob' })))).toBe(false);
  });

  test('a prefix matches the names it starts (case-sensitive, the whole name included), `*` every name, `User:*` every principal', () => {
    const prefixed = acl('allow', 'READ', 'ord', { patternType: 'prefixed' });
    expect(alice(on('READ', 'orders'), view(prefixed))).toBe(true);
    expect(alice(on('READ', 'ord'), view(prefixed))).toBe(true);
    expect(alice(on('READ', 'or'), view(prefixed))).toBe(false);
    expect(alice(on('READ', 'Orders'), view(prefixed))).toBe(false);
    expect(alice(on('READ', 'anything'), view(acl('allow', 'READ', '*')))).toBe(true);
    expect(alice(on('READ', 'anything'), view(acl('allow', 'READ', '*', { patternType: 'prefixed' })))).toBe(false); // a prefix `*` is the character
    expect(alice(on('READ', 'orders'), view(acl('allow', 'READ', 'orders'), acl('deny', 'READ', 'orders', { principal: 'User:*' })))).toBe(false);
  });

  test('super users are allowed whatever the ACLs say', () => {
    expect(decide(on('WRITE', 'orders'), 'User:admin', view(acl('deny', 'ALL', '*', { principal: 'User:*' })), SHAPE)).toBe(true);
  });

  test('allow.everyone.if.no.acl.found opens only resources no ACL names, whoever it is for', () => {
    expect(alice(on('WRITE', 'orders'), view(), OPEN)).toBe(true);
    expect(alice(on('WRITE', 'orders'), view(acl('allow', 'READ', 'ord', { patternType: 'prefixed', principal: 'User:bob' })), OPEN)).toBe(false);
    expect(alice(on('WRITE', 'orders'), view(acl('allow', 'READ', 'other')), OPEN)).toBe(true);
  });

  test('implied operations: an ALLOW of READ, WRITE, DELETE or ALTER allows DESCRIBE, of ALTER_CONFIGS DESCRIBE_CONFIGS; a DENY implies nothing; ALL is everything', () => {
    for (const operation of ['READ', 'WRITE', 'DELETE', 'ALTER', 'ALL']) expect(alice(on('DESCRIBE', 't'), view(acl('allow', operation, 't')))).toBe(true);
    expect(alice(on('DESCRIBE', 't'), view(acl('allow', 'CREATE', 't')))).toBe(false);
    expect(alice(on('DESCRIBE_CONFIGS', 't'), view(acl('allow', 'ALTER_CONFIGS', 't')))).toBe(true);
    expect(alice(on('ALTER_CONFIGS', 't'), view(acl('allow', 'DESCRIBE_CONFIGS', 't')))).toBe(false);
    expect(alice(on('READ', 't'), view(acl('allow', 'DESCRIBE', 't')))).toBe(false);
    expect(alice(on('DESCRIBE', 't'), view(acl('allow', 'READ', 't'), acl('deny', 'READ', 't')))).toBe(true);
    expect(alice(on('DESCRIBE', 't'), view(acl('allow', 'READ', 't'), acl('deny', 'ALL', 't')))).toBe(false);
  });

  test('an ACL that may or may not have stood leaves a decision open only where it could tip it', () => {
    expect(alice(on('WRITE', 't'), view([acl('allow', 'WRITE', 't'), null]))).toBeNull();
    expect(alice(on('WRITE', 't'), view([acl('allow', 'WRITE', 't'), null], acl('deny', 'WRITE', 't')))).toBe(false);
    expect(alice(on('WRITE', 't'), view(acl('allow', 'WRITE', 't'), [acl('deny', 'WRITE', 't'), null]))).toBeNull();
    expect(alice(on('WRITE', 't'), view(acl('allow', 'WRITE', 't'), [acl('deny', 'READ', 't'), null]))).toBe(true);
  });
});

describe('decisions on any resource of a type (authorizeByResourceType, KIP-679)', () => {
  test('an ALLOW on a literal name allows unless a DENY on that name, or on a prefix of it, dominates', () => {
    expect(alice(anyTopic('WRITE'), view(acl('allow', 'WRITE', 't1')))).toBe(true);
    expect(alice(anyTopic('WRITE'), view(acl('allow', 'WRITE', 't1'), acl('deny', 'WRITE', 't1')))).toBe(false);
    expect(alice(anyTopic('WRITE'), view(acl('allow', 'WRITE', 't1'), acl('deny', 'WRITE', 't', { patternType: 'prefixed' })))).toBe(false);
    expect(alice(anyTopic('WRITE'), view(acl('allow', 'WRITE', 't1'), acl('deny', 'WRITE', 't2')))).toBe(true);
  });

  test('an ALLOW on a prefix is dominated only by a DENY on a prefix of it, a DENY on `*` denies, an ALLOW on `*` allows', () => {
    const prefix = acl('allow', 'WRITE', 'tx', { patternType: 'prefixed' });
    expect(alice(anyTopic('WRITE'), view(prefix, acl('deny', 'WRITE', 'tx')))).toBe(true);
    expect(alice(anyTopic('WRITE'), view(prefix, acl('deny', 'WRITE', 't', { patternType: 'prefixed' })))).toBe(false);
    expect(alice(anyTopic('WRITE'), view(prefix, acl('deny', 'WRITE', 'txy', { patternType: 'prefixed' })))).toBe(true);
    expect(alice(anyTopic('WRITE'), view(prefix, acl('deny', 'WRITE', '*')))).toBe(false);
    expect(alice(anyTopic('WRITE'), view(acl('allow', 'WRITE', '*'), acl('deny', 'WRITE', 't', { patternType: 'prefixed' })))).toBe(true);
  });

  test('only the operation itself (or ALL) counts, and the name `hardcode` is checked first', () => {
    expect(alice(anyTopic('WRITE'), view(acl('allow', 'READ', 't1')))).toBe(false);
    expect(alice(anyTopic('DESCRIBE'), view(acl('allow', 'READ', 't1')))).toBe(false);
    expect(alice(anyTopic('WRITE'), view(acl('allow', 'ALL', 't1')))).toBe(true);
    // `hardcode` is denied here, yet the prefix `h` covers names no DENY does.
    expect(alice(anyTopic('WRITE'), view(acl('allow', 'WRITE', 'h', { patternType: 'prefixed' }), acl('deny', 'WRITE', 'hard', { patternType: 'prefixed' })))).toBe(true);
    expect(alice(anyTopic('WRITE'), view(), OPEN)).toBe(true); // no ACL names `hardcode`: the default rule allows it
    expect(alice(anyTopic('WRITE'), view(acl('deny', 'READ', 'h', { patternType: 'prefixed', principal: 'User:bob' })), OPEN)).toBe(false);
  });

  test("an idempotent producer's InitProducerId: IDEMPOTENT_WRITE on the cluster, or WRITE on any topic", () => {
    const initProducerId: AccessCheck = { kind: 'either', checks: [on('IDEMPOTENT_WRITE', 'kafka-cluster', 'cluster'), anyTopic('WRITE')] };
    expect(alice(initProducerId, view(acl('allow', 'WRITE', 't1')))).toBe(true);
    expect(alice(initProducerId, view(acl('allow', 'IDEMPOTENT_WRITE', 'kafka-cluster', { resourceType: 'cluster' })))).toBe(true);
    expect(alice(initProducerId, view(acl('allow', 'WRITE', 't1'), acl('deny', 'IDEMPOTENT_WRITE', 'kafka-cluster', { resourceType: 'cluster' })))).toBe(true);
    expect(alice(initProducerId, view(acl('allow', 'READ', 't1')))).toBe(false);
  });
});

describe('where an ACL stood over time', () => {
  const ACL = acl('deny', 'WRITE', 't');
  const OK: Outcome = { ok: true };
  const change = (kind: AclChangeOp['kind'], startMs: number, endMs: number, outcome: Outcome = OK): AclChangeOp => ({ kind, client: 'admin', node: 1, startMs, endMs, outcome, ...ACL });
  const presence = (ops: AclChangeOp[], fromMs: number, toMs: number) => presenceOver(aclLives(ops)[0]!, fromMs, toMs);

  test('a create answered ok: absent before it was sent, either while it ran, there after its answer until a delete is sent', () => {
    const ops = [change('create-acl', 100, 110), change('delete-acl', 500, 510)];
    expect(presence(ops, 0, 99)).toBe(false);
    expect(presence(ops, 0, 105)).toBeNull();
    expect(presence(ops, 111, 499)).toBe(true);
    expect(presence(ops, 111, 505)).toBeNull();
    expect(presence(ops, 511, 900)).toBe(false);
    expect(presence(ops, -Infinity, 300)).toBeNull(); // a view that may be older than the create
  });

  test('a change answered with an error may have taken effect; one never answered may take effect any time later; one never sent did nothing', () => {
    const failed = { ok: false as const, error: 'REQUEST_TIMED_OUT', answered: true };
    expect(presence([change('create-acl', 100, 110, failed)], 200, 300)).toBeNull();
    const lost = { ok: false as const, error: 'timeout', answered: false };
    expect(presence([change('create-acl', 100, 5_100, lost), change('create-acl', 6_000, 6_010), change('delete-acl', 7_000, 7_010)], 8_000, 9_000)).toBeNull();
    expect(presence([change('create-acl', 100, 110), change('delete-acl', 7_000, 7_010, { ok: false, error: 'not-sent', answered: false })], 8_000, 9_000)).toBe(true);
  });
});

describe('how old a broker view may be', () => {
  test('healthy for the bound: the bound before; unhealthy since: the last time it was; never that long: -Infinity', () => {
    const floor = viewFloorOf(
      [
        { node: 1, atMs: 0, healthy: true },
        { node: 1, atMs: 10_000, healthy: false },
        { node: 1, atMs: 12_000, healthy: true },
        { node: 2, atMs: 5_000, healthy: true },
      ],
      3_000,
    );
    expect(floor(1, 8_000)).toBe(5_000);
    expect(floor(1, 11_000)).toBe(7_000);
    expect(floor(1, 14_000)).toBe(7_000);
    expect(floor(1, 16_000)).toBe(13_000);
    expect(floor(2, 6_000)).toBe(-Infinity);
    expect(floor(3, 6_000)).toBe(-Infinity);
  });
});
