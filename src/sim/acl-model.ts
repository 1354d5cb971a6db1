/**
 * Kafka's authorization rules, written from Kafka's documentation and its StandardAuthorizer
 * (KIP-290 prefixed ACLs, KIP-679's idempotent producers), apart from Ferry's own authorizer: the
 * oracle acl-enforced holds each broker answer against.
 *
 * Three-valued (Kleene's logic): the ACLs a broker held while it decided are known only within
 * bounds (a change may or may not have reached it), so each ACL is there (true), not there (false)
 * or either (null), and so is every decision. A decision is sure only if no ACL that may or may not
 * be there could tip it.
 *
 * The rules, for one principal, operation and resource:
 * - a super user is allowed everything;
 * - an ACL applies when its resource type is the resource's, its pattern matches the name (LITERAL:
 *   the same name, or `*`; PREFIXED: a prefix of the name, case-sensitive), its principal is the
 *   principal or `User:*`, and its operation is the one asked, ALL, or (ALLOW only) one that
 *   implies it: READ, WRITE, DELETE and ALTER imply DESCRIBE; ALTER_CONFIGS implies DESCRIBE_CONFIGS;
 * - a DENY that applies denies, whatever else applies (DENY beats ALLOW); else an ALLOW that
 *   applies allows; else, if no ACL at all names a pattern matching the resource (whoever and
 *   whatever it is for), allow.everyone.if.no.acl.found decides (default: deny); else deny.
 * - "on any resource of a type" (Kafka's authorizeByResourceType, which InitProducerId asks for
 *   WRITE on topics, KIP-679): allowed if the check on the made-up name `hardcode` is; else denied
 *   by a DENY on the literal `*`; else allowed by an ALLOW on `*`, or by an ALLOW on a literal name
 *   that no DENY on that name or on a prefix of it dominates, or by an ALLOW on a prefix that no
 *   DENY on a prefix of that prefix dominates. Only ACLs for that very operation (or ALL) count.
 *
 * Hosts are not modelled: every ACL the simulation writes is for any host (`*`).
 */
import type { SimResourceType } from './history.ts';
import type { SimAcl } from './security-setup.ts';

/** true, false, or null: either (Kleene's unknown). */
export type Truth = boolean | null;

export function not(a: Truth): Truth {
  return a === null ? null : !a;
}

export function and(a: Truth, b: Truth): Truth {
  if (a === false || b === false) return false;
  return a === true && b === true ? true : null;
}

export function or(a: Truth, b: Truth): Truth {
  if (a === true || b === true) return true;
  return a === false && b === false ? false : null;
}

/** One question a broker asks its authorizer while it handles a request. */
export type AccessCheck =
  /** May the principal do `operation` on this resource? */
  | { readonly kind: 'resource'; readonly operation: string; readonly resourceType: SimResourceType; readonly resourceName: string }
  /** May it do `operation` on at least one resource of this type (authorizeByResourceType)? */
  | { readonly kind: 'any-of-type'; readonly operation: string; readonly resourceType: SimResourceType }
  /** Is any of these allowed (CreateTopics: CREATE on the cluster, or on the topic)? */
  | { readonly kind: 'either'; readonly checks: readonly AccessCheck[] };

/** The broker's settings that take part in a decision. */
export interface AuthorizerShape {
  /** super.users, as principals (`User:admin`). */
  readonly superUsers: ReadonlySet<string>;
  readonly allowEveryoneIfNoAclFound: boolean;
}

/** The ACLs a decision may see: each ACL of the run with whether it stood (null: it may or may not have). */
export interface AclView {
  /** The ACLs of this resource type (any principal), with where each stood. */
  ofType(resourceType: SimResourceType): readonly ViewedAcl[];
}

export interface ViewedAcl {
  readonly acl: SimAcl;
  readonly present: Truth;
}

export const WILDCARD_PRINCIPAL = 'User:*';
export const WILDCARD_RESOURCE = '*';
/** The name Kafka's authorizeByResourceType checks first, so that super users and the default rule decide as for any name. */
const BY_TYPE_PROBE_NAME = 'hardcode';
const ALL = 'ALL';
const DENY = 'deny';
const ALLOW = 'allow';
/** The operations whose ALLOW also allows DESCRIBE. */
const IMPLIES_DESCRIBE: ReadonlySet<string> = new Set(['DESCRIBE', 'READ', 'WRITE', 'DELETE', 'ALTER']);
/** The operations whose ALLOW also allows DESCRIBE_CONFIGS. */
const IMPLIES_DESCRIBE_CONFIGS: ReadonlySet<string> = new Set(['DESCRIBE_CONFIGS', 'ALTER_CONFIGS']);

/** Whether `principal` may do what `check` asks, given the ACLs `view` holds. */
export function decide(check: AccessCheck, principal: string, view: AclView, shape: AuthorizerShape): Truth {
  if (shape.superUsers.has(principal)) return true;
  if (check.kind === 'either') return check.checks.reduce<Truth>((allowed, each) => or(allowed, decide(each, principal, view, shape)), false);
  if (check.kind === 'any-of-type') return decideAnyOfType(check.operation, check.resourceType, principal, view, shape);
  return decideResource(check.operation, check.resourceType, check.resourceName, principal, view, shape);
}

function decideResource(operation: string, resourceType: SimResourceType, name: string, principal: string, view: AclView, shape: AuthorizerShape): Truth {
  let denied: Truth = false;
  let granted: Truth = false;
  let named: Truth = false;
  for (const { acl, present } of view.ofType(resourceType)) {
    if (!patternMatches(acl, name)) continue;
    named = or(named, present);
    if (!principalMatches(acl, principal)) continue;
    if (acl.permission === DENY && (acl.operation === operation || acl.operation === ALL)) denied = or(denied, present);
    if (acl.permission === ALLOW && allowCovers(acl.operation, operation)) granted = or(granted, present);
  }
  return and(not(denied), or(granted, and(shape.allowEveryoneIfNoAclFound, not(named))));
}

function decideAnyOfType(operation: string, resourceType: SimResourceType, principal: string, view: AclView, shape: AuthorizerShape): Truth {
  const probe = decideResource(operation, resourceType, BY_TYPE_PROBE_NAME, principal, view, shape);
  const counted = view.ofType(resourceType).filter(({ acl }) => principalMatches(acl, principal) && (acl.operation === operation || acl.operation === ALL));
  const denies = counted.filter(({ acl }) => acl.permission === DENY);
  let wildcardDenied: Truth = false;
  let wildcardAllowed: Truth = false;
  let undominated: Truth = false;
  for (const { acl, present } of counted) {
    const wildcard = acl.patternType === 'literal' && acl.resourceName === WILDCARD_RESOURCE;
    if (acl.permission === DENY && wildcard) wildcardDenied = or(wildcardDenied, present);
    if (acl.permission !== ALLOW) continue;
    if (wildcard) wildcardAllowed = or(wildcardAllowed, present);
    else undominated = or(undominated, and(present, not(dominated(acl, denies))));
  }
  return or(probe, and(not(wildcardDenied), or(wildcardAllowed, undominated)));
}

/** Whether a DENY that stands dominates this ALLOW: one on its literal name (a literal ALLOW only), or on a prefix of its name. */
function dominated(allow: SimAcl, denies: readonly ViewedAcl[]): Truth {
  let any: Truth = false;
  for (const { acl, present } of denies) {
    const sameLiteral = allow.patternType === 'literal' && acl.patternType === 'literal' && acl.resourceName === allow.resourceName;
    const prefix = acl.patternType === 'prefixed' && allow.resourceName.startsWith(acl.resourceName);
    if (sameLiteral || prefix) any = or(any, present);
  }
  return any;
}

export function patternMatches(acl: SimAcl, name: string): boolean {
  if (acl.patternType === 'prefixed') return name.startsWith(acl.resourceName);
  return acl.resourceName === name || acl.resourceName === WILDCARD_RESOURCE;
}

export function principalMatches(acl: SimAcl, principal: string): boolean {
  return acl.principal === principal || acl.principal === WILDCARD_PRINCIPAL;
}

/** Whether an ALLOW for `granted` allows `asked`: the same, ALL, or an operation that implies it. */
function allowCovers(granted: string, asked: string): boolean {
  if (granted === asked || granted === ALL) return true;
  if (asked === 'DESCRIBE') return IMPLIES_DESCRIBE.has(granted);
  if (asked === 'DESCRIBE_CONFIGS') return IMPLIES_DESCRIBE_CONFIGS.has(granted);
  return false;
}
