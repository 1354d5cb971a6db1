/**
 * SCRAM credential changes during the chaos of a secured run (issue 25), while the clients stay
 * connected: now and then the admin gives a legitimate user a new password for one SCRAM mechanism
 * (AlterUserScramCredentials), or deletes the user's credential of it and after a few seconds sets
 * a new one. Each change is tried until it is answered ok (a delete: or answered that nothing was
 * there, a retry of one that landed), then the new password goes to the clients (credential-book.ts):
 * sessions authenticated before go on; each new authentication, and each re-authentication, uses
 * the password the client holds then. One change at a time.
 *
 * Its draws come from a stream of its own, so a run without credential changes draws everything
 * else as it would with them.
 */
import { ErrorCode } from '../protocol/error-codes.ts';
import { saltedPasswordOf } from '../security/scram/credential.ts';
import { SCRAM_ITERATIONS_MIN, type ScramMechanism } from '../security/scram/mechanism.ts';
import type { Clock } from '../util/clock.ts';
import type { SeededRandom } from '../util/random.ts';
import { pick } from './acl-spells.ts';
import { errorName } from './client/api.ts';
import type { SimAdmin } from './client/index.ts';
import type { CredentialBook } from './credential-book.ts';
import { drawPassword } from './security-setup.ts';

/** Mean simulated ms between the end of one change and the next (a Poisson process over the chaos). */
const CHANGE_INTERVAL_MS_MEAN = 6_000;
/** Of changes, the share that delete the credential for a while first. */
const DELETE_SHARE = 0.35;
/** How long a deleted credential stays deleted, at least and at most. */
const DELETED_MS_MIN = 1_000;
const DELETED_MS_MAX = 5_000;
/** Between two tries of a change that failed. */
const RETRY_MS = 500;
const SALT_BYTES = 16;
/** Kafka's minimum: each change costs the admin this many HMACs, each login a client as many. */
const ITERATIONS = SCRAM_ITERATIONS_MIN;
/** A delete answered this way found nothing to delete: an earlier try of it landed. */
const NOTHING_TO_DELETE = errorName(ErrorCode.RESOURCE_NOT_FOUND);

export interface CredentialLoadOptions {
  readonly admin: SimAdmin;
  readonly clock: Clock;
  readonly random: SeededRandom;
  readonly book: CredentialBook;
  /** The users whose credentials change (the legitimate clients'). */
  readonly users: readonly string[];
  /** The SCRAM mechanisms the clients' listener enables. */
  readonly mechanisms: readonly ScramMechanism[];
  readonly chaosMs: number;
  readonly over: () => boolean;
  /** The clients stopped: nothing more is tried. */
  readonly stopped: () => boolean;
  readonly log: (line: string) => void;
}

export class CredentialLoad {
  readonly #options: CredentialLoadOptions;
  /** The number of the next credential set: unique in the run. */
  #nextNumber = 1;

  constructor(options: CredentialLoadOptions) {
    this.#options = options;
  }

  async run(): Promise<void> {
    const { random, chaosMs, clock, users, mechanisms } = this.#options;
    if (users.length === 0 || mechanisms.length === 0) return;
    let elapsedMs = 0;
    for (;;) {
      const waitMs = random.nextExponential(CHANGE_INTERVAL_MS_MEAN);
      elapsedMs += waitMs;
      if (elapsedMs >= chaosMs) return;
      await this.#sleep(waitMs);
      if (this.#options.over()) return;
      const startedMs = clock.nowMs();
      const user = pick(random, users);
      const mechanism = pick(random, mechanisms);
      if (random.next() < DELETE_SHARE) {
        this.#options.log(`delete the ${mechanism.name} credential of ${user}`);
        await this.#untilDone(() => this.#options.admin.alterScramCredential(user, mechanism, null, null), NOTHING_TO_DELETE);
        await this.#sleep(DELETED_MS_MIN + random.next() * (DELETED_MS_MAX - DELETED_MS_MIN));
      }
      await this.#setNew(user, mechanism);
      elapsedMs += clock.nowMs() - startedMs;
    }
  }

  /** A new password, set until answered ok, then handed to the clients. */
  async #setNew(user: string, mechanism: ScramMechanism): Promise<void> {
    const { random, admin, book } = this.#options;
    const number = this.#nextNumber++;
    const password = drawPassword(random);
    const salt = Uint8Array.from({ length: SALT_BYTES }, () => random.nextInt(256));
    const set = { salt, saltedPassword: saltedPasswordOf(mechanism, password, salt, ITERATIONS), iterations: ITERATIONS };
    this.#options.log(`set ${mechanism.name} credential ${number} of ${user}`);
    if (await this.#untilDone(() => admin.alterScramCredential(user, mechanism, number, set))) book.learn(user, mechanism.name, password, number);
  }

  /** Tries until answered ok (or `alsoDone`); false if the clients stopped first. */
  async #untilDone(attempt: () => Promise<{ ok: true } | { ok: false; error: string }>, alsoDone: string | null = null): Promise<boolean> {
    for (;;) {
      if (this.#options.stopped()) return false;
      const outcome = await attempt();
      if (outcome.ok || outcome.error === alsoDone) return true;
      await this.#sleep(RETRY_MS);
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => void this.#options.clock.setTimer(ms, resolve));
  }
}
