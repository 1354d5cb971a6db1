// The invariants of issue 13's security paths (intruder-no-data, auth-refused, auth-accepted,
// acl-enforced) over hand-built histories: each kept by a valid secured run and broken by one
// change.
import { describe, expect, test } from 'bun:test';
import { check } from '../../src/sim/checker.ts';
import type { AclChangeOp, AuthenticateOp, ClientOp, History, IntruderKind, IntruderOp, Outcome } from '../../src/sim/history.ts';
import { ACL_PROPAGATION_MS } from '../../src/sim/security-setup.ts';
import { fetch, history, NO_ANSWER, OK, offsetFetch, produce, replica, spell, VALID_LOG, validOps } from './history-fixture.ts';

type Span = { startMs: number; endMs: number };

const names = (run: History): string[] => [...new Set(check(run).map((violation) => violation.invariant))].sort();
const refused = (error: string): Outcome => ({ ok: false, error, answered: true });
const SECURITY = { users: { p1: 'p1', p2: 'p2', c1: 'reader', admin: 'admin' }, superUsers: ['broker', 'admin'], aclPropagationMs: ACL_PROPAGATION_MS, failedAuthenticationDelayMs: 100 };

function intruder(kind: IntruderKind, api: string, span: Span, outcome: Outcome, fields: Partial<IntruderOp> = {}): IntruderOp {
  const authentication = api === 'SaslAuthenticate' || api === 'SaslHandshake' || api === 'ApiVersions';
  return {
    kind: 'intruder',
    client: `x-${kind}`,
    node: 1,
    ...span,
    outcome,
    intruder: kind,
    api,
    mechanism: authentication && api !== 'ApiVersions' ? 'PLAIN' : null,
    authentication,
    listener: 'CLIENT',
    topic: 't',
    partition: 0,
    group: null,
    values: [],
    committedOffset: null,
    records: [],
    topics: [],
    offsets: [],
    errorMessage: null,
    ...fields,
  };
}

function authenticate(client: string, span: Span, outcome: Outcome = OK, reauthentication = false): AuthenticateOp {
  return { kind: 'authenticate', client, node: 1, ...span, outcome, mechanism: 'SCRAM-SHA-256', handshakeVersion: 1, reauthentication, sessionLifetimeMs: 0 };
}

function acl(kind: AclChangeOp['kind'], span: Span, user: string, operation: string, outcome: Outcome = OK): AclChangeOp {
  return { kind, client: 'admin', node: 1, ...span, outcome, principal: `User:${user}`, resourceType: 'topic', resourceName: 't', patternType: 'literal', operation, permission: 'deny' };
}

/** The fixture's valid run, secured: its clients' users, and more ops. */
function secured(extra: ClientOp[], log: string[] = VALID_LOG, health = undefined as Parameters<typeof history>[0]['health']): History {
  const base = history({ ops: [...validOps(), ...extra], replicaLogs: [replica(1, true, log), replica(2, false, log.slice(0, 2))], ...(health === undefined ? {} : { health }) });
  return { ...base, security: SECURITY };
}

describe('intruder-no-data', () => {
  test('refused produces, fetches and commits, and a Metadata naming nothing, keep it', () => {
    const ops = [
      intruder('no-acl', 'SaslAuthenticate', { startMs: 300, endMs: 301 }, OK),
      intruder('no-acl', 'Produce', { startMs: 302, endMs: 303 }, refused('TOPIC_AUTHORIZATION_FAILED'), { values: ['x-no-acl/0'] }),
      intruder('no-acl', 'Fetch', { startMs: 304, endMs: 305 }, refused('TOPIC_AUTHORIZATION_FAILED')),
      intruder('no-acl', 'OffsetCommit', { startMs: 306, endMs: 307 }, refused('GROUP_AUTHORIZATION_FAILED'), { committedOffset: 1_000_000_000 }),
      intruder('no-acl', 'Metadata', { startMs: 308, endMs: 309 }, OK),
    ];
    expect(check(secured(ops))).toEqual([]);
  });

  test("an intruder's value in a read, a final log or a WAL object breaks it", () => {
    const sent = intruder('wrong-password', 'Produce', { startMs: 300, endMs: 301 }, NO_ANSWER, { values: ['x-wrong-password/0'] });
    expect(names(secured([sent, fetch('c1', { startMs: 310, endMs: 320 }, 4, ['x-wrong-password/0'], 5)], [...VALID_LOG, 'x-wrong-password/0']))).toContain('intruder-no-data');
    expect(names({ ...secured([sent]), walRecords: [{ topic: 't', partition: 0, offset: 4, value: 'x-wrong-password/0', settledMs: 302 }] })).toContain('intruder-no-data');
  });

  test('records, topics or committed offsets answered to an intruder break it', () => {
    expect(names(secured([intruder('no-acl', 'Fetch', { startMs: 300, endMs: 301 }, refused('TOPIC_AUTHORIZATION_FAILED'), { records: [{ offset: 0, value: 'a0' }] })]))).toEqual(['intruder-no-data']);
    expect(names(secured([intruder('no-acl', 'Metadata', { startMs: 300, endMs: 301 }, OK, { topics: ['t'] })]))).toEqual(['intruder-no-data']);
    expect(names(secured([intruder('no-acl', 'OffsetFetch', { startMs: 300, endMs: 301 }, OK, { offsets: [4] })]))).toEqual(['intruder-no-data']);
  });

  test('an unauthorized request answered ok, or with an error other than an authorization one, breaks it', () => {
    expect(names(secured([intruder('no-acl', 'InitProducerId', { startMs: 300, endMs: 301 }, OK)]))).toEqual(['intruder-no-data']);
    expect(names(secured([intruder('no-acl', 'JoinGroup', { startMs: 300, endMs: 301 }, refused('MEMBER_ID_REQUIRED'))]))).toEqual(['intruder-no-data']);
    expect(check(secured([intruder('no-acl', 'JoinGroup', { startMs: 300, endMs: 301 }, NO_ANSWER)]))).toEqual([]);
  });

  test("a legitimate OffsetFetch answering an intruder's commit breaks it", () => {
    const commit = intruder('no-acl', 'OffsetCommit', { startMs: 300, endMs: 301 }, refused('GROUP_AUTHORIZATION_FAILED'), { committedOffset: 1_000_000_000 });
    // No member committed it either (fetched-offset-committed).
    expect(names(secured([commit, offsetFetch({ startMs: 400, endMs: 410 }, 1_000_000_000)]))).toEqual(['fetched-offset-committed', 'intruder-no-data']);
  });
});

describe('auth-refused', () => {
  test('refused exchanges, closed connections and unanswered data requests keep it', () => {
    const ops = [
      intruder('wrong-password', 'SaslAuthenticate', { startMs: 300, endMs: 400 }, refused('SASL_AUTHENTICATION_FAILED'), { errorMessage: 'Authentication failed: Invalid username or password' }),
      intruder('unknown-user', 'SaslAuthenticate', { startMs: 300, endMs: 400 }, refused('SASL_AUTHENTICATION_FAILED'), { errorMessage: 'Authentication failed: Invalid username or password' }),
      intruder('unknown-user', 'SaslAuthenticate', { startMs: 500, endMs: 600 }, NO_ANSWER),
      intruder('bad-mechanism', 'SaslHandshake', { startMs: 300, endMs: 400 }, refused('UNSUPPORTED_SASL_MECHANISM')),
      intruder('unauthenticated', 'ApiVersions', { startMs: 300, endMs: 301 }, OK),
      intruder('unauthenticated', 'Produce', { startMs: 302, endMs: 303 }, NO_ANSWER, { values: ['x-unauthenticated/0'] }),
      intruder('expired-session', 'SaslAuthenticate', { startMs: 300, endMs: 301 }, OK),
      intruder('expired-session', 'Fetch', { startMs: 3_400, endMs: 3_401 }, NO_ANSWER),
    ];
    expect(check(secured(ops))).toEqual([]);
  });

  test('an intruder that authenticates, or is refused with another error, breaks it', () => {
    expect(names(secured([intruder('wrong-password', 'SaslAuthenticate', { startMs: 300, endMs: 301 }, OK)]))).toEqual(['auth-refused']);
    expect(names(secured([intruder('unknown-user', 'SaslAuthenticate', { startMs: 300, endMs: 301 }, refused('ILLEGAL_SASL_STATE'))]))).toEqual(['auth-refused']);
    expect(names(secured([intruder('bad-mechanism', 'SaslHandshake', { startMs: 300, endMs: 301 }, OK)]))).toEqual(['auth-refused']);
  });

  test('a data request answered without authentication, or after the session expired, breaks it', () => {
    expect(names(secured([intruder('unauthenticated', 'Metadata', { startMs: 300, endMs: 301 }, OK)]))).toEqual(['auth-refused']);
    expect(names(secured([intruder('wrong-password', 'Fetch', { startMs: 300, endMs: 301 }, refused('TOPIC_AUTHORIZATION_FAILED'))]))).toEqual(['auth-refused']);
    expect(names(secured([intruder('expired-session', 'Produce', { startMs: 300, endMs: 301 }, refused('NOT_LEADER_OR_FOLLOWER'))]))).toEqual(['auth-refused']);
  });

  test('a refusal answered before the failed-authentication delay breaks it', () => {
    expect(names(secured([intruder('wrong-password', 'SaslAuthenticate', { startMs: 300, endMs: 350 }, refused('SASL_AUTHENTICATION_FAILED'))]))).toEqual(['auth-refused']);
    expect(names(secured([intruder('bad-mechanism', 'SaslHandshake', { startMs: 300, endMs: 301 }, refused('UNSUPPORTED_SASL_MECHANISM'))]))).toEqual(['auth-refused']);
  });

  test('a refusal that tells an unknown user from a wrong password breaks it', () => {
    const ops = [
      intruder('wrong-password', 'SaslAuthenticate', { startMs: 300, endMs: 400 }, refused('SASL_AUTHENTICATION_FAILED'), { errorMessage: 'Authentication failed: Invalid username or password' }),
      intruder('unknown-user', 'SaslAuthenticate', { startMs: 500, endMs: 700 }, refused('SASL_AUTHENTICATION_FAILED'), { errorMessage: 'Authentication failed: unknown user' }),
    ];
    expect(names(secured(ops))).toEqual(['auth-refused']);
  });
});

describe('auth-accepted', () => {
  test('legitimate exchanges that succeed, or got no answer, keep it', () => {
    expect(
      check(secured([authenticate('p1', { startMs: 50, endMs: 60 }), authenticate('p1', { startMs: 160, endMs: 170 }, OK, true), authenticate('c1', { startMs: 180, endMs: 190 }, NO_ANSWER)])),
    ).toEqual([]);
  });

  test('a legitimate exchange refused breaks it', () => {
    expect(names(secured([authenticate('p1', { startMs: 50, endMs: 60 }, refused('SASL_AUTHENTICATION_FAILED'))]))).toEqual(['auth-accepted']);
    expect(names(secured([authenticate('p1', { startMs: 160, endMs: 170 }, refused('SERVER_PROOF_REFUSED'), true)]))).toEqual(['auth-accepted']);
  });
});

describe('acl-enforced', () => {
  /** p1 denied WRITE on t from 1 000 ms (answered 1 010) until the delete sent at 5 000 (answered 5 010). */
  const denial = () => [acl('create-acl', { startMs: 1_000, endMs: 1_010 }, 'p1', 'WRITE'), acl('delete-acl', { startMs: 5_000, endMs: 5_010 }, 'p1', 'WRITE')];
  const denied = refused('TOPIC_AUTHORIZATION_FAILED');

  test('refusals inside a denial, and successes outside it, keep it', () => {
    const ops = [
      ...denial(),
      produce('p1', { startMs: 1_005, endMs: 1_006 }, ['a3'], 4), // before the propagation bound: either answer
      produce('p1', { startMs: 4_200, endMs: 4_210 }, ['a4'], null, { outcome: denied }),
      produce('p2', { startMs: 4_300, endMs: 4_310 }, ['b1'], 5), // another user
      produce('p1', { startMs: 6_000, endMs: 6_010 }, ['a5'], null, { outcome: denied }), // within the bound after the lift
    ];
    expect(check(secured(ops, [...VALID_LOG, 'a3', 'b1']))).toEqual([]);
  });

  test('a request served while surely denied breaks it, and so does a record every attempt of which was denied', () => {
    expect(names(secured([...denial(), produce('p1', { startMs: 4_200, endMs: 4_210 }, ['a4'], 4)], [...VALID_LOG, 'a4']))).toEqual(['acl-enforced']);
    expect(names(secured([...denial(), produce('p1', { startMs: 4_200, endMs: 4_210 }, ['a4'], null, { acks: 0 })], [...VALID_LOG, 'a4']))).toEqual(['acl-enforced']);
  });

  test('a broker unhealthy in the bound before the request may still serve it', () => {
    const ops = [...denial(), produce('p1', { startMs: 4_200, endMs: 4_210 }, ['a4'], 4)];
    expect(check(secured(ops, [...VALID_LOG, 'a4'], [...spell(1, 0, 2_000), { node: 2, atMs: 0, healthy: true }]))).toEqual([]);
  });

  test('a refusal with no denial standing breaks it, and so does one of a super user', () => {
    expect(names(secured([...denial(), produce('p1', { startMs: 9_000, endMs: 9_010 }, ['a4'], null, { outcome: denied })]))).toEqual(['acl-enforced']);
    expect(names(secured([...denial(), fetch('c1', { startMs: 2_000, endMs: 2_010 }, 4, [], 4, { outcome: denied })]))).toEqual(['acl-enforced']);
    expect(names(secured([produce('admin', { startMs: 300, endMs: 310 }, ['z0'], null, { outcome: denied })]))).toEqual(['acl-enforced']);
  });
});
