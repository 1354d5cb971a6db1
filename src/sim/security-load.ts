/**
 * ACL changes during the chaos of a secured run (issue 13): now and then the admin denies a
 * legitimate client what it does (WRITE for a producer, READ for a reader or the group's members)
 * on one topic, and after a few seconds lifts the denial again. One denial at a time; each create
 * and delete is tried until it succeeds (the lift even after the chaos), and recorded as an op
 * (acl-enforced judges what the brokers answered meanwhile).
 *
 * Its draws come from the security's own stream, so a run without ACL changes draws everything
 * else as it would with them.
 */
import { AclOperation } from '../security/acl/model.ts';
import type { Clock } from '../util/clock.ts';
import type { SeededRandom } from '../util/random.ts';
import type { SimAdmin } from './client/index.ts';
import { MEMBER_USER, READER_USER, simAcl, type SimAcl } from './security-setup.ts';

/** Mean simulated ms between the end of one denial and the next (a Poisson process over the chaos). */
const DENIAL_INTERVAL_MS_MEAN = 6_000;
/** How long a denial stands, at least and at most. */
const DENIAL_MS_MIN = 2_000;
const DENIAL_MS_MAX = 6_000;
/** Between two tries of a create or delete that failed. */
const RETRY_MS = 500;

export interface SecurityLoadOptions {
  readonly admin: SimAdmin;
  readonly clock: Clock;
  readonly random: SeededRandom;
  readonly producers: readonly string[];
  /** Whether the run has group consumers (whose READ may be denied). */
  readonly groupMembers: boolean;
  /** The topics as they are now. */
  readonly topics: () => readonly string[];
  readonly chaosMs: number;
  readonly over: () => boolean;
  /** The clients stopped: nothing more is tried. */
  readonly stopped: () => boolean;
  readonly log: (line: string) => void;
}

export class SecurityLoad {
  readonly #options: SecurityLoadOptions;

  constructor(options: SecurityLoadOptions) {
    this.#options = options;
  }

  async run(): Promise<void> {
    const { random, chaosMs } = this.#options;
    let elapsedMs = 0;
    for (;;) {
      const waitMs = -Math.log(1 - random.next()) * DENIAL_INTERVAL_MS_MEAN;
      elapsedMs += waitMs;
      if (elapsedMs >= chaosMs) return;
      await this.#sleep(waitMs);
      if (this.#options.over()) return;
      const acl = this.#drawDenial();
      const standsMs = DENIAL_MS_MIN + random.next() * (DENIAL_MS_MAX - DENIAL_MS_MIN);
      const startedMs = this.#options.clock.nowMs();
      this.#options.log(`deny ${acl.principal} ${acl.operation} on ${acl.resourceName}`);
      await this.#untilOk(() => this.#options.admin.createAcl(acl));
      await this.#sleep(Math.max(0, standsMs - (this.#options.clock.nowMs() - startedMs)));
      await this.#untilOk(() => this.#options.admin.deleteAcl(acl));
      this.#options.log(`lifted the denial of ${acl.principal} ${acl.operation} on ${acl.resourceName}`);
      elapsedMs += this.#options.clock.nowMs() - startedMs;
    }
  }

  #drawDenial(): SimAcl {
    const { random, producers, groupMembers } = this.#options;
    const topics = this.#options.topics();
    const topic = topics[random.nextInt(topics.length)]!;
    const readers = groupMembers ? [READER_USER, MEMBER_USER] : [READER_USER];
    const candidates = [...producers.map((user) => [user, AclOperation.WRITE] as const), ...readers.map((user) => [user, AclOperation.READ] as const)];
    const [user, operation] = candidates[random.nextInt(candidates.length)]!;
    return simAcl(user, 'topic', topic, operation, 'deny');
  }

  async #untilOk(attempt: () => Promise<{ ok: boolean }>): Promise<void> {
    while (!this.#options.stopped() && !(await attempt()).ok) await this.#sleep(RETRY_MS);
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => void this.#options.clock.setTimer(ms, resolve));
  }
}
