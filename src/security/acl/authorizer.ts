// Kafka's StandardAuthorizer decisions (metadata/src/main/java/org/apache/kafka/metadata/authorizer/
// StandardAuthorizerData.java: authorize, findAclRule, findResult) and the Authorizer interface's
// default authorizeByResourceType (clients/src/main/java/org/apache/kafka/server/authorizer/
// Authorizer.java), over an index of the ACLs instead of Kafka's sorted set.
import { FerryError } from '../../errors.ts';
import { assert } from '../../util/assert.ts';
import { canonicalAddress } from '../../util/network.ts';
import { regressed } from '../../util/regressions.ts';
import { principalText, WILDCARD_PRINCIPAL_TEXT } from '../principal.ts';
import type { Session } from '../session.ts';
import { AclIndex, type ResourceAcls } from './acl-index.ts';
import { entryFilterMatches, patternFilterMatches } from './filter.ts';
import {
  type AccessControlEntry,
  type AclBinding,
  type AclBindingFilter,
  AclOperation,
  AclPermissionType,
  PatternType,
  type ResourcePattern,
  ResourceType,
  WILDCARD_HOST,
  WILDCARD_RESOURCE,
} from './model.ts';

/** What decided a check, as Kafka's audit log names it. */
export type AuthorizationRule =
  | { readonly kind: 'SuperUser' }
  | { readonly kind: 'DefaultAllow' } // no ACL on the resource, allow.everyone.if.no.acl.found=true
  | { readonly kind: 'DefaultDeny' } // no ACL on the resource, or ACLs but none for this principal, host and operation
  | { readonly kind: 'NotReady' } // the ACLs were never loaded: Kafka's AuthorizerNotReadyException, a denial here
  | { readonly kind: 'MatchingAcl'; readonly acl: AclBinding };

export interface AuthorizationDecision {
  readonly session: Session;
  readonly operation: AclOperation;
  readonly resourceType: ResourceType;
  readonly resourceName: string;
  readonly allowed: boolean;
  readonly rule: AuthorizationRule;
  /** Kafka's Action.logIfAllowed: the access is granted by this check (else it only filters or lists). */
  readonly logIfAllowed: boolean;
  /** Kafka's Action.logIfDenied: the client asked for this resource by name (else a denial only filters it out). */
  readonly logIfDenied: boolean;
}

/** Told of every decision, so that the broker can log or count denials (Kafka's kafka.authorizer.logger). */
export type AuthorizationAudit = (decision: AuthorizationDecision) => void;

export interface AuditFlags {
  readonly logIfAllowed?: boolean;
  readonly logIfDenied?: boolean;
}

export interface AuthorizerOptions {
  /** Kafka's super.users, parsed (`User:admin`): allowed everything, whatever the ACLs say. */
  readonly superUsers?: readonly string[];
  /** Kafka's allow.everyone.if.no.acl.found (default false): allow on a resource no ACL names. */
  readonly allowEveryoneIfNoAclFound?: boolean;
  readonly audit?: AuthorizationAudit;
}

const SUPER_USER: AuthorizationRule = Object.freeze({ kind: 'SuperUser' });
const DEFAULT_ALLOW: AuthorizationRule = Object.freeze({ kind: 'DefaultAllow' });
const DEFAULT_DENY: AuthorizationRule = Object.freeze({ kind: 'DefaultDeny' });
const NOT_READY: AuthorizationRule = Object.freeze({ kind: 'NotReady' });
const AUDIT_DEFAULTS: Required<AuditFlags> = { logIfAllowed: true, logIfDenied: true };
/** The resource name Kafka's authorizeByResourceType checks first, so super users and the default rule apply. */
const BY_TYPE_PROBE_NAME = 'hardcode';

/** Operations that an ALLOW ACL for them also allows DESCRIBE for (never a DENY). */
const IMPLIES_DESCRIBE: ReadonlySet<AclOperation> = new Set([AclOperation.DESCRIBE, AclOperation.READ, AclOperation.WRITE, AclOperation.DELETE, AclOperation.ALTER]);
/** Operations that an ALLOW ACL for them also allows DESCRIBE_CONFIGS for. */
const IMPLIES_DESCRIBE_CONFIGS: ReadonlySet<AclOperation> = new Set([AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS]);

/**
 * Decides whether a session may perform an operation on a resource, from the ACLs loaded into
 * it. Kafka's rules: super users may do anything; any matching DENY ACL denies, else any matching
 * ALLOW allows; a resource that no ACL names at all takes allow.everyone.if.no.acl.found (default
 * deny); one that has ACLs, none of them matching, is denied. An ACL matches when its pattern
 * applies to the name (literal equal, literal `*`, or a prefix; case-sensitive), its principal is
 * the session's or `User:*`, its host is the client's address or `*`, and its operation is the one
 * asked, ALL, or (ALLOW only) one implying it: READ, WRITE, DELETE, ALTER imply DESCRIBE;
 * ALTER_CONFIGS implies DESCRIBE_CONFIGS. Checks are synchronous and look up only the patterns
 * that apply to the name.
 */
export class Authorizer {
  readonly #superUsers: ReadonlySet<string>;
  readonly #allowEveryoneIfNoAclFound: boolean;
  readonly #audit: AuthorizationAudit | undefined;
  #index = new AclIndex();
  #ready = false;

  constructor(options: AuthorizerOptions = {}) {
    this.#superUsers = new Set(options.superUsers ?? []);
    this.#allowEveryoneIfNoAclFound = options.allowEveryoneIfNoAclFound ?? false;
    this.#audit = options.audit;
  }

  /** True once ACLs were loaded; before, everyone but super users is denied. */
  get ready(): boolean {
    return this.#ready;
  }

  /** Replaces every ACL with these (a full read of the store) and makes the authorizer ready. */
  load(resources: Iterable<ResourceAcls>): void {
    const index = new AclIndex();
    for (const { pattern, entries } of resources) index.set(pattern, entries);
    this.#index = index;
    this.#ready = true;
  }

  /** Replaces the ACLs of one resource pattern (no entries: none left), as this process changed them. */
  setResource(pattern: ResourcePattern, entries: readonly AccessControlEntry[]): void {
    this.#index.set(pattern, entries);
  }

  aclCount(): number {
    return this.#index.aclCount();
  }

  /** May `session` perform `operation` on the resource of this type and (literal) name? */
  authorize(session: Session, operation: AclOperation, resourceType: ResourceType, resourceName: string, flags: AuditFlags = AUDIT_DEFAULTS): boolean {
    const principal = principalText(session.principal);
    let rule: AuthorizationRule;
    if (this.#superUsers.has(principal)) rule = SUPER_USER;
    else if (!this.#ready) rule = NOT_READY;
    else rule = this.#findRule(principal, session.clientAddress, operation, resourceType, resourceName);
    const allowed = rule === SUPER_USER || rule === DEFAULT_ALLOW || (rule.kind === 'MatchingAcl' && rule.acl.entry.permissionType === AclPermissionType.ALLOW);
    if (this.#audit !== undefined) {
      const logIfAllowed = flags.logIfAllowed ?? true;
      const logIfDenied = flags.logIfDenied ?? true;
      this.#audit({ session, operation, resourceType, resourceName, allowed, rule, logIfAllowed, logIfDenied });
    }
    return allowed;
  }

  /**
   * May `session` perform `operation` on at least one resource of this type? Kafka's default
   * authorizeByResourceType: allowed if the check on a made-up name is (super users, the default
   * rule, a matching `*` or prefix); else denied by a DENY on the literal `*`; else allowed by an
   * ALLOW on `*`, or by an ALLOW on a literal name or prefix that no DENY dominates (a DENY on the
   * same literal name, or a DENY prefix of it). Only ACLs for this exact operation or ALL count:
   * no implied operations here, as in Kafka.
   */
  authorizeByResourceType(session: Session, operation: AclOperation, resourceType: ResourceType): boolean {
    assert(operation !== AclOperation.ANY && operation !== AclOperation.UNKNOWN, 'authorizeByResourceType needs a real operation');
    assert(resourceType !== ResourceType.ANY && resourceType !== ResourceType.UNKNOWN, 'authorizeByResourceType needs a real resource type');
    if (this.authorize(session, operation, resourceType, BY_TYPE_PROBE_NAME, { logIfAllowed: true, logIfDenied: false })) return true;
    if (!this.#ready) return false;
    const principal = principalText(session.principal);
    const patterns = new PatternSets();
    for (const resource of this.#index.resources(resourceType)) {
      for (const entry of resource.entries) {
        if (!entryApplies(entry, principal, session.clientAddress) || (entry.operation !== operation && entry.operation !== AclOperation.ALL)) continue;
        if (!patterns.add(resource.pattern, entry.permissionType)) return false;
      }
    }
    return patterns.anyAllowUndominated();
  }

  /** The ACLs a DescribeAcls filter selects, ordered by resource type, pattern type and name. */
  acls(filter: AclBindingFilter): AclBinding[] {
    const type = filter.pattern.resourceType === ResourceType.ANY ? null : filter.pattern.resourceType;
    const resources = [...this.#index.resources(type)].filter((resource) => patternFilterMatches(filter.pattern, resource.pattern));
    resources.sort((a, b) => comparePatterns(a.pattern, b.pattern));
    return resources.flatMap(({ pattern, entries }) => entries.filter((entry) => entryFilterMatches(filter.entry, entry)).map((entry) => ({ pattern, entry })));
  }

  #findRule(principal: string, host: string, operation: AclOperation, resourceType: ResourceType, resourceName: string): AuthorizationRule {
    const found: MatchingAcls = { hasResourceAcls: false, allow: null, deny: null };
    this.#index.visitApplying(resourceType, resourceName, ({ pattern, entries }) => {
      found.hasResourceAcls = true;
      for (const entry of entries) {
        const permission = entryResult(entry, principal, host, operation);
        if (permission === AclPermissionType.DENY) {
          if (regressed('prefixed-deny-literal') && pattern.patternType === PatternType.PREFIXED && pattern.name !== resourceName) continue;
          found.deny = { pattern, entry };
          return true;
        }
        if (permission === AclPermissionType.ALLOW && found.allow === null) found.allow = { pattern, entry };
      }
      return false;
    });
    if (found.allow !== null && regressed('acl-allow-before-deny')) return { kind: 'MatchingAcl', acl: found.allow };
    if (found.deny !== null) return { kind: 'MatchingAcl', acl: found.deny };
    if (found.allow !== null) return { kind: 'MatchingAcl', acl: found.allow };
    if (!found.hasResourceAcls && this.#allowEveryoneIfNoAclFound) return DEFAULT_ALLOW;
    return DEFAULT_DENY;
  }
}

/** Kafka's MatchingRuleBuilder: what the patterns that apply to a name held for one check. */
interface MatchingAcls {
  /** Some ACL names a pattern that applies (whoever it is for): the default rule no longer applies. */
  hasResourceAcls: boolean;
  allow: AclBinding | null;
  deny: AclBinding | null;
}

function entryApplies(entry: AccessControlEntry, principal: string, host: string): boolean {
  return (entry.principal === principal || entry.principal === WILDCARD_PRINCIPAL_TEXT) && hostApplies(entry.host, host);
}

/**
 * Whether an ACL's host is the client's address: `*`, the same text, or the same IPv6 address
 * written otherwise (Kafka compares with Java's full form `0:0:0:0:0:0:0:1`, which an ACL copied
 * from Kafka holds; Bun writes `::1`).
 */
function hostApplies(aclHost: string, clientAddress: string): boolean {
  if (aclHost === WILDCARD_HOST || aclHost === clientAddress) return true;
  return aclHost.includes(':') && clientAddress.includes(':') && canonicalAddress(aclHost) === canonicalAddress(clientAddress);
}

/** Kafka's findResult: the ACL's permission if it matches principal, host and operation, else null. */
function entryResult(entry: AccessControlEntry, principal: string, host: string, operation: AclOperation): AclPermissionType | null {
  if (!entryApplies(entry, principal, host)) return null;
  if (entry.operation !== AclOperation.ALL && entry.operation !== operation) {
    if (entry.permissionType !== AclPermissionType.ALLOW) return null;
    if (operation === AclOperation.DESCRIBE && !IMPLIES_DESCRIBE.has(entry.operation)) return null;
    if (operation === AclOperation.DESCRIBE_CONFIGS && !IMPLIES_DESCRIBE_CONFIGS.has(entry.operation)) return null;
    if (operation !== AclOperation.DESCRIBE && operation !== AclOperation.DESCRIBE_CONFIGS) return null;
  }
  return entry.permissionType;
}

/** The allowed and denied names authorizeByResourceType collects, by pattern type. */
class PatternSets {
  readonly #allowLiteral = new Set<string>();
  readonly #allowPrefixed = new Set<string>();
  readonly #denyLiteral = new Set<string>();
  readonly #denyPrefixed = new Set<string>();
  #wildcardAllow = false;

  /** Notes one matching ACL; false if it is a DENY on the literal `*` (denied outright). */
  add(pattern: ResourcePattern, permission: AclPermissionType): boolean {
    const literal = pattern.patternType === PatternType.LITERAL;
    if (permission === AclPermissionType.DENY) {
      if (literal && pattern.name === WILDCARD_RESOURCE) return false;
      (literal ? this.#denyLiteral : this.#denyPrefixed).add(pattern.name);
    } else if (permission === AclPermissionType.ALLOW) {
      if (literal && pattern.name === WILDCARD_RESOURCE) this.#wildcardAllow = true;
      else (literal ? this.#allowLiteral : this.#allowPrefixed).add(pattern.name);
    }
    return true;
  }

  anyAllowUndominated(): boolean {
    if (this.#wildcardAllow) return true;
    for (const name of this.#allowLiteral) if (!this.#denyLiteral.has(name) && !this.#deniedByPrefix(name)) return true;
    for (const name of this.#allowPrefixed) if (!this.#deniedByPrefix(name)) return true;
    return false;
  }

  #deniedByPrefix(name: string): boolean {
    for (let length = 1; length <= name.length; length++) if (this.#denyPrefixed.has(name.slice(0, length))) return true;
    return false;
  }
}

function comparePatterns(a: ResourcePattern, b: ResourcePattern): number {
  if (a.resourceType !== b.resourceType) return a.resourceType - b.resourceType;
  if (a.patternType !== b.patternType) return a.patternType - b.patternType;
  return a.name < b.name ? -1 : a.name > b.name ? 1 : 0;
}

/** Kafka's super.users value (`User:a;User:b`, blanks ignored), each principal checked to parse. */
export function parseSuperUsers(value: string): string[] {
  const users = value
    .split(';')
    .map((user) => user.trim())
    .filter((user) => user !== '');
  for (const user of users) {
    if (!user.includes(':')) throw new FerryError('InvalidConfig', `super.users: expected a string in format principalType:principalName but got ${user}`);
  }
  return users;
}

/** The authorizer's settings from broker properties, read as Kafka reads them (a boolean is `true` in any case). */
export function authorizerOptionsFromProperties(properties: Readonly<Record<string, string | undefined>>): AuthorizerOptions {
  const superUsers = properties['super.users'];
  const allowEveryone = properties['allow.everyone.if.no.acl.found'];
  return {
    superUsers: superUsers === undefined ? [] : parseSuperUsers(superUsers),
    allowEveryoneIfNoAclFound: allowEveryone !== undefined && allowEveryone.trim().toLowerCase() === 'true',
  };
}
