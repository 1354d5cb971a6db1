/**
 * The passwords the legitimate clients authenticate with (issue 25), as an operator's secret store
 * holds them: each user's one password at the start (PLAIN's, which never changes, and the SCRAM
 * credentials written before the brokers started), then, for SCRAM, each new one once its
 * AlterUserScramCredentials was answered ok: the operator hands it to the clients then, and each
 * client reads it at its next authentication (a session authenticated before goes on until it ends).
 */
import { PLAIN_MECHANISM } from '../security/sasl/plain.ts';

interface Credential {
  readonly password: string;
  /** Which credential it is: 0 at the start, then the number of the change that set it. */
  readonly number: number;
}

export class CredentialBook {
  readonly #initial: ReadonlyMap<string, string>;
  /** `${user}\0${mechanism}` → the newest SCRAM credential handed out. */
  readonly #learned = new Map<string, Credential>();

  constructor(passwords: ReadonlyMap<string, string>) {
    this.#initial = passwords;
  }

  /** The credential a client of `user` authenticating with `mechanism` uses now. */
  credentialOf(user: string, mechanism: string): Credential {
    const learned = mechanism === PLAIN_MECHANISM ? undefined : this.#learned.get(keyOf(user, mechanism));
    return learned ?? { password: this.#initial.get(user)!, number: 0 };
  }

  /** A new SCRAM credential, handed to the clients (its change was answered ok). */
  learn(user: string, mechanism: string, password: string, number: number): void {
    this.#learned.set(keyOf(user, mechanism), { password, number });
  }
}

function keyOf(user: string, mechanism: string): string {
  return `${user}\u0000${mechanism}`;
}
