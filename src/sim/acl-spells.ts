/**
 * The ACLs a secured run changes while its clients run (issue 25), drawn: what the access prober
 * may do at setup, and the spells of the chaos. A spell adds an ACL and deletes it again, or
 * deletes one that setup created (revokes a right) and creates it again. Every shape occurs:
 * ALLOW and DENY; literal names, prefixes and the literal `*`; topics, groups, the cluster and
 * transactional ids; a legitimate client's own principal or every principal (`User:*`, DENY only,
 * so that the intruder no ACL names stays without rights).
 */
import { SIM_CLUSTER_NAME } from './access-checks.ts';
import type { SimResourceType } from './history.ts';
import { type SimAcl, simAclOf } from './security-setup.ts';
import type { SeededRandom } from '../util/random.ts';

/** What the access prober asks about besides the run's topics (client/access-prober.ts). */
export const PROBER_GROUPS: readonly string[] = ['g0', 'gp'];
export const PROBER_TRANSACTIONAL_IDS: readonly string[] = ['tx0', 'tx1', 'ty'];
export const PROBER_NEW_TOPICS: readonly string[] = ['tnew', 'new'];

/** The operations worth an ACL on each type: those the simulation's requests need, and those that imply them. */
const OPERATIONS_OF: Readonly<Record<SimResourceType, readonly string[]>> = {
  topic: ['READ', 'WRITE', 'DESCRIBE', 'CREATE', 'DELETE', 'ALTER', 'DESCRIBE_CONFIGS', 'ALTER_CONFIGS', 'ALL'],
  group: ['READ', 'DESCRIBE', 'DELETE', 'ALL'],
  cluster: ['CREATE', 'DESCRIBE', 'ALTER', 'DESCRIBE_CONFIGS', 'ALTER_CONFIGS', 'IDEMPOTENT_WRITE', 'ALL'],
  'transactional-id': ['WRITE', 'DESCRIBE', 'ALL'],
};
const RESOURCE_TYPES: readonly SimResourceType[] = ['topic', 'group', 'cluster', 'transactional-id'];
/** How a pattern is drawn: a literal name, a prefix of one, or the literal `*` (the cluster: its one name, literal or as a prefix). */
const LITERAL_SHARE = 0.45;
const WILDCARD_SHARE = 0.15;
/** Of prefixes drawn, the share shorter than the name they come from (a prefix as long as the name matches only it, as a literal would). */
const STRICT_PREFIX_SHARE = 0.75;
/** Of the prober's setup grants (each a menu line), the share included. */
const PROBER_GRANT_SHARE = 0.6;
/** Of runs, the share whose prober also starts with a drawn DENY. */
const PROBER_SETUP_DENY_SHARE = 0.3;
/** Of spells that deny a legitimate client, the share for every principal (`User:*`). */
const EVERYONE_SHARE = 0.1;
/** Of a run's spells: on the access prober, revoking a legitimate client's setup ALLOW; the rest deny a legitimate client. */
const PROBER_SPELL_SHARE = 0.4;
const REVOKE_SPELL_SHARE = 0.2;

export function pick<T>(random: SeededRandom, values: readonly T[]): T {
  return values[random.nextInt(values.length)]!;
}

/** A pattern over `names`: one of them literally, a prefix of one, or `*`; the cluster's one name otherwise. */
function drawPattern(random: SeededRandom, resourceType: SimResourceType, names: readonly string[]): Pick<SimAcl, 'resourceName' | 'patternType'> {
  if (resourceType === 'cluster') return { resourceName: SIM_CLUSTER_NAME, patternType: random.next() < 0.8 ? 'literal' : 'prefixed' };
  const draw = random.next();
  if (draw < WILDCARD_SHARE) return { resourceName: '*', patternType: 'literal' };
  const name = pick(random, names);
  if (draw < WILDCARD_SHARE + LITERAL_SHARE) return { resourceName: name, patternType: 'literal' };
  const strict = name.length > 1 && random.next() < STRICT_PREFIX_SHARE;
  return { resourceName: strict ? name.slice(0, 1 + random.nextInt(name.length - 1)) : name, patternType: 'prefixed' };
}

function namesOf(resourceType: SimResourceType, topics: readonly string[]): readonly string[] {
  if (resourceType === 'topic') return [...topics, ...PROBER_NEW_TOPICS];
  if (resourceType === 'group') return PROBER_GROUPS;
  if (resourceType === 'transactional-id') return PROBER_TRANSACTIONAL_IDS;
  return [SIM_CLUSTER_NAME];
}

/** Any ACL for `user`: a drawn type, pattern, operation and permission. */
export function drawAnyAcl(random: SeededRandom, user: string, topics: readonly string[], permission: SimAcl['permission'] = random.next() < 0.5 ? 'allow' : 'deny'): SimAcl {
  const resourceType = pick(random, RESOURCE_TYPES);
  const pattern = drawPattern(random, resourceType, namesOf(resourceType, topics));
  return simAclOf(`User:${user}`, resourceType, pattern, pick(random, OPERATIONS_OF[resourceType]), permission);
}

/**
 * What the access prober may do at setup: each line of a menu (something to describe, configure
 * or create on each resource type) with a drawn pattern, included or not; sometimes a DENY too.
 */
export function drawProberAcls(random: SeededRandom, user: string, topics: readonly string[]): SimAcl[] {
  const menu: [SimResourceType, readonly string[]][] = [
    ['topic', ['DESCRIBE', 'READ', 'WRITE', 'ALL']],
    ['topic', ['DESCRIBE_CONFIGS', 'ALTER_CONFIGS']],
    ['topic', ['CREATE']],
    ['cluster', ['CREATE']],
    ['group', ['DESCRIBE', 'READ']],
    ['transactional-id', ['WRITE', 'DESCRIBE']],
    ['cluster', ['DESCRIBE', 'ALTER', 'DESCRIBE_CONFIGS', 'ALTER_CONFIGS', 'IDEMPOTENT_WRITE']],
    ['cluster', ['DESCRIBE_CONFIGS', 'ALTER_CONFIGS', 'ALL']],
  ];
  const acls: SimAcl[] = [];
  for (const [resourceType, operations] of menu) {
    if (random.next() >= PROBER_GRANT_SHARE) continue;
    acls.push(simAclOf(`User:${user}`, resourceType, drawPattern(random, resourceType, namesOf(resourceType, topics)), pick(random, operations), 'allow'));
  }
  if (random.next() < PROBER_SETUP_DENY_SHARE) acls.push(drawAnyAcl(random, user, topics, 'deny'));
  return dedupe(acls);
}

/** A legitimate client and the operations its requests need on each resource type (a denial of any bites). */
export interface Deniable {
  readonly user: string;
  readonly operations: Readonly<Partial<Record<SimResourceType, readonly string[]>>>;
}

/** One spell of the chaos: `acl` added (then deleted), or revoked (deleted, then created again). */
export interface AclSpell {
  readonly kind: 'add' | 'revoke';
  readonly acl: SimAcl;
}

/** What the spells may draw from. */
export interface SpellMenu {
  readonly prober: string;
  readonly deniable: readonly Deniable[];
  /** Setup ALLOWs a spell may revoke (the legitimate clients' and the prober's). */
  readonly revocable: readonly SimAcl[];
}

/** The next spell of the chaos. */
export function drawSpell(random: SeededRandom, menu: SpellMenu, topics: readonly string[]): AclSpell {
  const draw = random.next();
  if (draw < PROBER_SPELL_SHARE) return { kind: 'add', acl: drawAnyAcl(random, menu.prober, topics) };
  if (draw < PROBER_SPELL_SHARE + REVOKE_SPELL_SHARE && menu.revocable.length > 0) return { kind: 'revoke', acl: pick(random, menu.revocable) };
  const { user, operations } = pick(random, menu.deniable);
  const types = RESOURCE_TYPES.filter((type) => (operations[type]?.length ?? 0) > 0);
  const resourceType = pick(random, types);
  const operation = random.next() < 0.2 ? 'ALL' : pick(random, operations[resourceType]!);
  const names = resourceType === 'topic' ? topics : resourceType === 'group' ? [PROBER_GROUPS[0]!] : namesOf(resourceType, topics);
  const principal = random.next() < EVERYONE_SHARE ? 'User:*' : `User:${user}`;
  return { kind: 'add', acl: simAclOf(principal, resourceType, drawPattern(random, resourceType, names), operation, 'deny') };
}

function dedupe(acls: readonly SimAcl[]): SimAcl[] {
  const seen = new Set<string>();
  return acls.filter((acl) => {
    const key = JSON.stringify(acl);
    if (seen.has(key)) return false;
    seen.add(key);
    return true;
  });
}
