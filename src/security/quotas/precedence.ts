// Which quota applies to a client: Kafka's ClientQuotaManager (server/.../quota/ClientQuotaManager.java,
// DefaultQuotaCallback.quotaMetricTags and findQuota) takes the first of eight levels that has a
// quota for the key, most specific first:
//
//   1. /config/users/<user>/clients/<client-id>
//   2. /config/users/<user>/clients/<default>
//   3. /config/users/<user>
//   4. /config/users/<default>/clients/<client-id>
//   5. /config/users/<default>/clients/<default>
//   6. /config/users/<default>
//   7. /config/clients/<client-id>
//   8. /config/clients/<default>
//
// Each key (produce, fetch, request) is resolved on its own: a user's producer_byte_rate and a
// client id's consumer_byte_rate both apply. The level also decides who shares a rate (Kafka's
// metric tags): a user's own quota (3, 6) is shared by all its client ids; the levels naming a
// client id (1, 2, 4, 5) are per user and client id; the client-id levels (7, 8) per client id,
// whoever the user. A default is never shared: `<default>` gives each user (or client id) a rate
// of its own. An empty user or client id (a client that sent none) matches no level that names
// that part, as in Kafka.
import type { EntityQuotas, QuotaEntity, QuotaKey } from './model.ts';

/** The quota that applies to a client, and the rate it is measured against (Kafka's metric tags). */
export interface AppliedQuota {
  /** The quota's value: bytes per second, or percent of a request thread. */
  readonly bound: number;
  /** 1 to 8, as numbered above. */
  readonly level: number;
  /** Whose rate this is: the user the rate is kept for, '' when the level names no user. */
  readonly sensorUser: string;
  /** The client id the rate is kept for, '' when the level names no client id. */
  readonly sensorClientId: string;
}

type Part = 'named' | 'default' | 'absent';

/** The eight levels, in precedence order. */
const LEVELS: readonly (readonly [user: Part, clientId: Part])[] = [
  ['named', 'named'],
  ['named', 'default'],
  ['named', 'absent'],
  ['default', 'named'],
  ['default', 'default'],
  ['default', 'absent'],
  ['absent', 'named'],
  ['absent', 'default'],
];

function partOf(part: Part, name: string): string | null | undefined {
  return part === 'named' ? name : part === 'default' ? null : undefined;
}

/**
 * The quota for `key` that applies to (`user`, `clientId`), or null if no level has one (the
 * client is unlimited). `quotasOf` answers an entity's quotas.
 */
export function appliedQuota(quotasOf: (entity: QuotaEntity) => EntityQuotas | undefined, key: QuotaKey, user: string, clientId: string): AppliedQuota | null {
  for (let index = 0; index < LEVELS.length; index++) {
    const [userPart, clientPart] = LEVELS[index]!;
    if ((userPart !== 'absent' && user === '') || (clientPart !== 'absent' && clientId === '')) continue;
    const entity: Record<string, string | null> = {};
    const userName = partOf(userPart, user);
    const clientName = partOf(clientPart, clientId);
    if (userName !== undefined) entity.user = userName;
    if (clientName !== undefined) entity['client-id'] = clientName;
    const bound = quotasOf(entity)?.get(key);
    if (bound === undefined) continue;
    return { bound, level: index + 1, sensorUser: userPart === 'absent' ? '' : user, sensorClientId: clientPart === 'absent' ? '' : clientId };
  }
  return null;
}
