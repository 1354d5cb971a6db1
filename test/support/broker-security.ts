/**
 * The `security` of a BrokerContext built by a test: no authorizer (everything allowed, as a broker
 * without authorizer.class.name), or the Authorizer given; SCRAM credentials in memory.
 */
import type { BrokerContext } from '../../src/broker/context.ts';
import { ControlStore } from '../../src/control/control-store.ts';
import type { Authorizer } from '../../src/security/acl/authorizer.ts';
import { ScramCredentialStore } from '../../src/security/scram/store.ts';
import { ClientQuotaStore } from '../../src/security/quotas/store.ts';
import { MemoryStore } from '../../src/store/memory.ts';

export function brokerSecurity(options: { authorizer?: Authorizer | null; interBrokerListener?: string | null } = {}): BrokerContext['security'] {
  const control = new ControlStore(new MemoryStore(), 'test');
  return {
    authorizer: options.authorizer ?? null,
    acls: null,
    scram: new ScramCredentialStore(control),
    quotas: new ClientQuotaStore(control),
    interBrokerListener: options.interBrokerListener ?? null,
  };
}

/** What a test context without listeners of its own needs: everything allowed, no endpoints beyond the topology's. */
export const OPEN_SECURITY = { security: brokerSecurity(), endpoints: [] } as const;
