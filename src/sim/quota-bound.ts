import type { History } from './history.ts';

/** The quotas a Produce is throttled by. */
const PRODUCE_QUOTA_KEYS: ReadonlySet<string> = new Set(['producer_byte_rate', 'request_percentage']);

/**
 * The clients whose user a produce quota (producer_byte_rate, request_percentage) may have bound
 * (issue 25): a broker throttles them by muting their connection (KIP-219), so their attempts may
 * time out behind a throttle of many seconds on a partition that works; quota-throttle judges those.
 */
export function producersUnderQuota(history: History): ReadonlySet<string> {
  const users = new Set<string>();
  for (const op of history.ops) if (op.kind === 'alter-quota' && PRODUCE_QUOTA_KEYS.has(op.key)) users.add(op.user);
  const clients = new Set<string>();
  for (const [client, user] of Object.entries(history.security?.users ?? {})) if (users.has(user)) clients.add(client);
  return clients;
}
