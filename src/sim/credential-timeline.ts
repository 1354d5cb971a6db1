/**
 * Where each SCRAM credential of a run stood (issue 25), from the admin's changes alone (the
 * history's ScramChangeOps): a user's credential of one mechanism is one record (value-timeline.ts)
 * holding credential 0 (written before the brokers started) until the first change takes effect;
 * each change sets a new one, or none (null: deleted). PLAIN's passwords never change.
 */
import { PLAIN_MECHANISM } from '../security/sasl/plain.ts';
import type { ScramChangeOp } from './history.ts';
import type { Life } from './presence.ts';
import { ValueLives } from './value-timeline.ts';

/** A credential that stood from the start and never changed. */
const ALWAYS: Life = { initially: true, changes: [] };
const FIRST_CREDENTIAL = 0;

export class CredentialLives {
  readonly #lives: ValueLives<number | null>;

  constructor(ops: readonly ScramChangeOp[]) {
    this.#lives = new ValueLives(
      ops.map((op) => ({ ...op, record: keyOf(op.user, op.mechanism), value: op.credential })),
      FIRST_CREDENTIAL,
    );
  }

  /** The life of credential `credential` of `user` and `mechanism`. */
  lifeOf(user: string, mechanism: string, credential: number): Life {
    if (mechanism === PLAIN_MECHANISM) return credential === FIRST_CREDENTIAL ? ALWAYS : { initially: false, changes: [] };
    return this.#lives.lifeOf(keyOf(user, mechanism), credential);
  }
}

function keyOf(user: string, mechanism: string): string {
  return `${user}\u0000${mechanism}`;
}
