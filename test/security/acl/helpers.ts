import type { ResourceAcls } from '../../../src/security/acl/acl-index.ts';
import { type AclBinding, AclOperation, AclPermissionType, PatternType, type ResourceType, samePattern } from '../../../src/security/acl/model.ts';
import { parsePrincipal } from '../../../src/security/principal.ts';
import type { Session } from '../../../src/security/session.ts';

/** A PLAINTEXT session of `User:name` (or any `Type:name`) from `host`. */
export function session(principal: string, host = '10.0.0.1'): Session {
  return { principal: parsePrincipal(principal)!, clientAddress: host, listenerName: 'PLAINTEXT', securityProtocol: 'PLAINTEXT', saslMechanism: null };
}

export interface AclDraft {
  readonly resourceType: ResourceType;
  readonly name: string;
  readonly patternType?: PatternType;
  readonly principal?: string;
  readonly host?: string;
  readonly operation?: AclOperation;
  readonly permissionType?: AclPermissionType;
}

/** An ACL with defaults: LITERAL, `User:alice`, any host, READ, ALLOW. */
export function acl(draft: AclDraft): AclBinding {
  return {
    pattern: { resourceType: draft.resourceType, name: draft.name, patternType: draft.patternType ?? PatternType.LITERAL },
    entry: {
      principal: draft.principal ?? 'User:alice',
      host: draft.host ?? '*',
      operation: draft.operation ?? AclOperation.READ,
      permissionType: draft.permissionType ?? AclPermissionType.ALLOW,
    },
  };
}

/** Bindings grouped into resources, as Authorizer.load takes them. */
export function resourcesOf(bindings: readonly AclBinding[]): ResourceAcls[] {
  const resources: { pattern: AclBinding['pattern']; entries: AclBinding['entry'][] }[] = [];
  for (const binding of bindings) {
    const resource = resources.find((r) => samePattern(r.pattern, binding.pattern));
    if (resource === undefined) resources.push({ pattern: binding.pattern, entries: [binding.entry] });
    else resource.entries.push(binding.entry);
  }
  return resources;
}
