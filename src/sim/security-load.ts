/**
 * ACL changes during the chaos of a secured run (issues 13 and 25): spells (acl-spells.ts), each
 * an ACL added and after a few seconds deleted, or a setup ACL revoked and after a few seconds
 * created again: DENYs of what the legitimate clients do (literal, prefixed or `*`; topics,
 * their group, the cluster's IDEMPOTENT_WRITE; their principal or `User:*`), and any ACL of the
 * access prober. SPELL_LOOPS loops run spells at once, never two of one ACL. Each create and
 * delete is tried until it succeeds (the undo even after the chaos) and recorded as an op
 * (acl-enforced judges what the brokers answered meanwhile).
 *
 * Its draws come from a stream of its own, so a run without ACL changes draws everything else as
 * it would with them.
 */
import type { Clock } from '../util/clock.ts';
import type { SeededRandom } from '../util/random.ts';
import { type AclSpell, drawSpell, type SpellMenu } from './acl-spells.ts';
import { aclKey } from './acl-timeline.ts';
import type { SimAdmin } from './client/index.ts';

/** Mean simulated ms between the end of one spell of a loop and the next (a Poisson process over the chaos). */
const SPELL_INTERVAL_MS_MEAN = 5_000;
/** How long a spell stands, at least and at most. */
const SPELL_MS_MIN = 2_000;
const SPELL_MS_MAX = 6_000;
/** Spells at once: two, so that an ALLOW and a DENY (or two prefixes) meet now and then. */
const SPELL_LOOPS = 2;
/** Between two tries of a create or delete that failed. */
const RETRY_MS = 500;

export interface SecurityLoadOptions {
  readonly admin: SimAdmin;
  readonly clock: Clock;
  readonly random: SeededRandom;
  readonly menu: SpellMenu;
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
  /** The ACLs of the spells under way: a loop draws again rather than change one of them. */
  readonly #busy = new Set<string>();

  constructor(options: SecurityLoadOptions) {
    this.#options = options;
  }

  run(): Promise<void> {
    return Promise.all(Array.from({ length: SPELL_LOOPS }, () => this.#loop())).then(() => {});
  }

  async #loop(): Promise<void> {
    const { random, chaosMs, clock } = this.#options;
    let elapsedMs = 0;
    for (;;) {
      const waitMs = random.nextExponential(SPELL_INTERVAL_MS_MEAN);
      elapsedMs += waitMs;
      if (elapsedMs >= chaosMs) return;
      await this.#sleep(waitMs);
      if (this.#options.over()) return;
      const spell = drawSpell(random, this.#options.menu, this.#options.topics());
      const key = aclKey(spell.acl);
      if (this.#busy.has(key)) continue;
      this.#busy.add(key);
      const startedMs = clock.nowMs();
      await this.#cast(spell, SPELL_MS_MIN + random.next() * (SPELL_MS_MAX - SPELL_MS_MIN));
      this.#busy.delete(key);
      elapsedMs += clock.nowMs() - startedMs;
    }
  }

  async #cast({ kind, acl }: AclSpell, standsMs: number): Promise<void> {
    const { admin, clock, log } = this.#options;
    const what = `${acl.permission.toUpperCase()} ${acl.principal} ${acl.operation} on ${acl.resourceType} ${acl.resourceName}${acl.patternType === 'prefixed' ? '*' : ''}`;
    const startedMs = clock.nowMs();
    log(`${kind === 'add' ? 'add' : 'revoke'} ${what}`);
    await this.#untilOk(() => (kind === 'add' ? admin.createAcl(acl) : admin.deleteAcl(acl)));
    await this.#sleep(Math.max(0, standsMs - (clock.nowMs() - startedMs)));
    await this.#untilOk(() => (kind === 'add' ? admin.deleteAcl(acl) : admin.createAcl(acl)));
    log(`${kind === 'add' ? 'removed' : 'restored'} ${what}`);
  }

  async #untilOk(attempt: () => Promise<{ ok: boolean }>): Promise<void> {
    while (!this.#options.stopped() && !(await attempt()).ok) await this.#sleep(RETRY_MS);
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => void this.#options.clock.setTimer(ms, resolve));
  }
}
