import { assert } from '../util/assert.ts';
import { canonicalAddress, clientAddressOf } from '../util/network.ts';

/**
 * Kafka's max.connections.per.ip (which Kafka leaves unbounded): connections from one address
 * beyond it are closed on arrival, so that one host (a client in a reconnect loop, a password
 * guesser) cannot take every slot of max.connections.
 */
export const MAX_CONNECTIONS_PER_IP_DEFAULT = Number.MAX_SAFE_INTEGER;

export interface ConnectionLimitsOptions {
  /** max.connections: open at once across every listener. */
  readonly maxConnections: number;
  /** max.connections.per.ip. */
  readonly maxConnectionsPerIp?: number;
  /** max.connections.per.ip.overrides: address -> its own bound (0 refuses the address). */
  readonly perIpOverrides?: ReadonlyMap<string, number>;
}

export type Refusal = 'max.connections' | 'max.connections.per.ip';

/**
 * Counts the broker's open connections, in all and per client address, across its listeners, and
 * says which limit a new one would break. Kafka's ConnectionQuotas without the rates.
 */
export class ConnectionLimits {
  readonly #maxConnections: number;
  readonly #maxPerIp: number;
  readonly #overrides: ReadonlyMap<string, number>;
  readonly #perIp = new Map<string, number>();
  #open = 0;

  constructor(options: ConnectionLimitsOptions) {
    this.#maxConnections = options.maxConnections;
    this.#maxPerIp = options.maxConnectionsPerIp ?? MAX_CONNECTIONS_PER_IP_DEFAULT;
    this.#overrides = new Map([...(options.perIpOverrides ?? new Map<string, number>())].map(([address, bound]) => [ipOf(address), bound]));
    assert(Number.isSafeInteger(this.#maxConnections) && this.#maxConnections > 0, 'max.connections is a positive integer');
    assert(Number.isSafeInteger(this.#maxPerIp) && this.#maxPerIp >= 0, 'max.connections.per.ip is a non-negative integer');
  }

  /** Takes a slot for a connection from `address`, or says which limit refuses it (nothing taken then). */
  admit(address: string): Refusal | null {
    const ip = ipOf(address);
    if (this.#open >= this.#maxConnections) return 'max.connections';
    const fromIp = this.#perIp.get(ip) ?? 0;
    if (fromIp >= (this.#overrides.get(ip) ?? this.#maxPerIp)) return 'max.connections.per.ip';
    this.#perIp.set(ip, fromIp + 1);
    this.#open++;
    return null;
  }

  /** Gives back the slot of a connection `admit` took. */
  release(address: string): void {
    const ip = ipOf(address);
    const fromIp = this.#perIp.get(ip) ?? 0;
    assert(fromIp > 0 && this.#open > 0, 'a released connection was admitted');
    if (fromIp === 1) this.#perIp.delete(ip);
    else this.#perIp.set(ip, fromIp - 1);
    this.#open--;
  }

  get open(): number {
    return this.#open;
  }

  get maxConnections(): number {
    return this.#maxConnections;
  }
}

/** An address as the limits count it: an IPv4-mapped one as IPv4, an IPv6 one in one form (an override may be written `0:0:0:0:0:0:0:1`, as Kafka reads it, for a client Bun sees as `::1`). */
function ipOf(address: string): string {
  return canonicalAddress(clientAddressOf(address));
}
