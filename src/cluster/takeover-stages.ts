import { assert } from '../util/assert.ts';
import { AdoptionPool } from './adoption-pool.ts';

/** What a claim hands its adoption: called once the partition is served, it leaves the takeovers in flight. */
export type Served = () => void;
/** How a claim that won queues its partition's adoption; resolves once the adoption ended (or never started: the stages failed first). */
export type QueueAdoption = (adoption: (served: Served) => Promise<void>) => Promise<void>;

/**
 * [K4], [K5] One scan's takeovers in two stages: the claims, up to a bound at once, and the
 * adoptions of the claims won, up to another, started in the order the claims were won. A claim
 * does not wait for the adoptions ahead of it: a broker taking over a dead one's 500 partitions
 * had claimed only the first ones while the rest waited behind their adoptions, each answering
 * its clients NOT_LEADER_OR_FOLLOWER meanwhile; claimed, a partition's produces wait for its
 * adoption instead [K5] and are answered as soon as it serves. As AdoptionPool: the first failure
 * stops the stages (nothing more starts) and `settled` throws it once the rest ended.
 */
export class TakeoverStages {
  readonly #claims: AdoptionPool;
  readonly #adoptions: AdoptionPool;
  /** Takeovers counted towards the share: from its claim's start until it lost, or its adoption served or ended. */
  #inFlight = 0;
  /** The adoptions' starts, in the order queued: each waits for room in turn, and no claim waits for them. */
  #starts: Promise<void> = Promise.resolve();
  /** What follows adoptions once their partitions are served (afterwards). */
  readonly #afterwards: Promise<void>[] = [];

  constructor(claimsInFlight: number, adoptionsInFlight: number) {
    this.#claims = new AdoptionPool(claimsInFlight);
    this.#adoptions = new AdoptionPool(adoptionsInFlight);
  }

  /**
   * Claims under way, and adoptions queued or under way and not serving yet: each adds a partition
   * served unless it loses its race or fails. Counted once each, from the claim's start to the
   * moment it serves: counted as a claim and an adoption at once, or as an adoption and a partition
   * served, a scan adopting 97 partitions left 5 of them to the next scan.
   */
  get inFlight(): number {
    return this.#inFlight;
  }

  /** Whether a claim or an adoption failed: the scan starts nothing more. */
  get failed(): boolean {
    return this.#claims.failed || this.#adoptions.failed;
  }

  /** Starts `claim` once fewer than its bound run (not at all after a failure); resolves once it started. A claim that won queues its adoption with the function it is given. */
  claim(claim: (adopt: QueueAdoption) => Promise<void>): Promise<void> {
    return this.#claims.run(async () => {
      this.#inFlight++;
      let queued = false;
      try {
        await claim((adoption) => {
          assert(!queued, 'a claim queues one adoption: its partition');
          queued = true;
          return this.#queue(adoption);
        });
      } finally {
        if (!queued) this.#inFlight--;
      }
    });
  }

  /**
   * Work that follows an adoption once its partition is served (noting what its rebuild found):
   * `settled` waits for it, and it holds no room among the adoptions.
   */
  afterwards(work: Promise<void>): void {
    this.#afterwards.push(work);
  }

  /** Waits for every claim, then every adoption queued and what follows them; throws the first failure once all ended. */
  async settled(): Promise<void> {
    let failure: { readonly error: unknown } | null = null;
    await this.#claims.settled().catch((error: unknown) => void (failure = { error }));
    await this.#starts;
    await this.#adoptions.settled().catch((error: unknown) => void (failure ??= { error }));
    for (const work of this.#afterwards) await work.catch((error: unknown) => void (failure ??= { error }));
    if (failure !== null) throw (failure as { readonly error: unknown }).error;
  }

  /** Queues an adoption: it starts once those queued before it started and fewer than the bound run. */
  #queue(adoption: (served: Served) => Promise<void>): Promise<void> {
    let counted = true;
    const served = () => {
      if (counted) this.#inFlight--;
      counted = false;
    };
    let started = false;
    let ended!: () => void;
    const end = new Promise<void>((resolve) => (ended = resolve));
    const run = async () => {
      started = true;
      try {
        await adoption(served);
      } finally {
        served();
        ended();
      }
    };
    this.#starts = this.#starts
      .then(() => this.#adoptions.run(run))
      .then(() => {
        if (started) return;
        served(); // the stages failed first: it never starts
        ended();
      });
    return end;
  }
}
