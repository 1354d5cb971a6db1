import { isIP } from 'node:net';
import type { Clock } from '../util/clock.ts';
import { systemNetwork } from '../util/system-network.ts';

/**
 * How long a registered host name's addresses are trusted before they are looked up again. Longer
 * costs fewer lookups on the replica Fetch path; shorter follows a broker that moved sooner.
 */
export const REGISTERED_ADDRESS_CACHE_MS = 30_000;

/** Resolves a host name to its addresses (the network's: DNS by default; tests and the simulation inject one). */
export type HostResolver = (host: string) => Promise<string[]>;

const systemResolver: HostResolver = (host) => systemNetwork.resolve(host);

/**
 * Whether a connection comes from a broker's registered address (its broker record's host), the
 * check a replica Fetch passes before its progress counts (issue 9 finding 13, until brokers
 * authenticate each other). An IP literal is compared as is; a host name by its addresses.
 */
export class RegisteredAddresses {
  readonly #clock: Clock;
  readonly #resolve: HostResolver;
  readonly #cache = new Map<string, { addresses: ReadonlySet<string>; atMs: number }>();

  constructor(clock: Clock, resolve: HostResolver = systemResolver) {
    this.#clock = clock;
    this.#resolve = resolve;
  }

  async matches(peer: string, host: string): Promise<boolean> {
    const from = normalize(peer);
    if (isIP(normalize(host)) !== 0) return from === normalize(host);
    return (await this.#addresses(host)).has(from);
  }

  async #addresses(host: string): Promise<ReadonlySet<string>> {
    const nowMs = this.#clock.monotonicMs();
    const cached = this.#cache.get(host);
    if (cached !== undefined && nowMs - cached.atMs < REGISTERED_ADDRESS_CACHE_MS) return cached.addresses;
    const addresses = new Set((await this.#resolve(host).catch(() => [] as string[])).map(normalize));
    if (addresses.size > 0) this.#cache.set(host, { addresses, atMs: nowMs }); // a failed lookup is retried on the next report
    return addresses;
  }
}

/** IPv4-mapped IPv6 (`::ffff:10.0.0.1`, as dual-stack sockets report IPv4 peers) compares as IPv4. */
function normalize(address: string): string {
  const lower = address.toLowerCase();
  return lower.startsWith('::ffff:') && isIP(lower.slice(7)) === 4 ? lower.slice(7) : lower;
}
