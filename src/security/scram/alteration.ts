import { scramMechanismOfType, type ScramMechanism } from './mechanism.ts';
import { ScramErrorCode, ScramMessage, type AlterUserScramCredentialsResult, type ScramCredentialDeletion, type ScramCredentialUpsertion } from './results.ts';

/**
 * The checks of AlterUserScramCredentials that need no stored state, in ScramControlManager's
 * order: a user named twice in one request (among deletions and upsertions together) is
 * DUPLICATE_RESOURCE and nothing of it is done; then the name, the mechanism and (upsertions)
 * the iteration count. Whether a deleted credential exists is judged when it is written.
 */

/**
 * The longest salt taken, in bytes: it is kept in the user's control record and sent in every
 * server-first message (Kafka's own salts are ~26 bytes).
 */
export const SCRAM_SALT_BYTES_MAX = 1024;
/**
 * The longest user name the store can hold, as its record key escapes it: a file-store key
 * segment takes 253 bytes (file-keys.ts); S3 takes more.
 */
export const SCRAM_USER_KEY_CHARS_MAX = 253;

export type UserChange =
  | { readonly kind: 'delete'; readonly mechanism: ScramMechanism }
  | { readonly kind: 'upsert'; readonly mechanism: ScramMechanism; readonly upsertion: ScramCredentialUpsertion };

export interface AlterationPlan {
  /** Users in the order the request first named them. */
  readonly order: readonly string[];
  /** At most one change per user: the ones that passed the checks. */
  readonly changes: ReadonlyMap<string, UserChange>;
  readonly refused: ReadonlyMap<string, AlterUserScramCredentialsResult>;
}

export function planAlteration(deletions: readonly ScramCredentialDeletion[], upsertions: readonly ScramCredentialUpsertion[]): AlterationPlan {
  const order: string[] = [];
  const changes = new Map<string, UserChange>();
  const refused = new Map<string, AlterUserScramCredentialsResult>();
  const refuse = (user: string, errorCode: number, errorMessage: string): void => void refused.set(user, { user, errorCode, errorMessage });
  const consider = (name: string, check: () => UserChange | AlterUserScramCredentialsResult): void => {
    order.push(name);
    if (refused.has(name)) return; // a third mention of a duplicate: already answered
    if (changes.delete(name)) return refuse(name, ScramErrorCode.DUPLICATE_RESOURCE, ScramMessage.ALTER_TWICE);
    const outcome = check();
    if ('kind' in outcome) changes.set(name, outcome);
    else refused.set(name, outcome);
  };
  for (const deletion of deletions) consider(deletion.name, () => checkDeletion(deletion));
  for (const upsertion of upsertions) consider(upsertion.name, () => checkUpsertion(upsertion));
  return { order: [...new Set(order)], changes, refused };
}

function checkDeletion(deletion: ScramCredentialDeletion): UserChange | AlterUserScramCredentialsResult {
  const mechanism = checkUserAndMechanism(deletion.name, deletion.mechanism);
  if ('errorCode' in mechanism) return mechanism;
  return { kind: 'delete', mechanism };
}

function checkUpsertion(upsertion: ScramCredentialUpsertion): UserChange | AlterUserScramCredentialsResult {
  const user = upsertion.name;
  const mechanism = checkUserAndMechanism(user, upsertion.mechanism);
  if ('errorCode' in mechanism) return mechanism;
  if (upsertion.iterations < mechanism.iterationsMin) return unacceptable(user, ScramMessage.TOO_FEW_ITERATIONS);
  if (upsertion.iterations > mechanism.iterationsMax) return unacceptable(user, ScramMessage.TOO_MANY_ITERATIONS);
  // Ferry's own bounds (Kafka takes any salt and any salted password).
  if (upsertion.salt.length > SCRAM_SALT_BYTES_MAX) return unacceptable(user, `The salt is longer than ${SCRAM_SALT_BYTES_MAX} bytes`);
  if (upsertion.saltedPassword.length !== mechanism.keyBytes)
    return unacceptable(user, `The salted password of ${mechanism.name} must be ${mechanism.keyBytes} bytes, not ${upsertion.saltedPassword.length}`);
  return { kind: 'upsert', mechanism, upsertion };
}

function checkUserAndMechanism(user: string, type: number): ScramMechanism | AlterUserScramCredentialsResult {
  if (user === '') return unacceptable(user, ScramMessage.USERNAME_EMPTY);
  const mechanism = scramMechanismOfType(type);
  if (mechanism === null) return { user, errorCode: ScramErrorCode.UNSUPPORTED_SASL_MECHANISM, errorMessage: ScramMessage.UNKNOWN_MECHANISM };
  const key = userKeyOf(user);
  if (key === null) return unacceptable(user, 'Username is not well-formed Unicode');
  if (key.length > SCRAM_USER_KEY_CHARS_MAX) return unacceptable(user, `Username is too long: ${key.length} characters once escaped for its record, at most ${SCRAM_USER_KEY_CHARS_MAX}`);
  return mechanism;
}

function unacceptable(user: string, errorMessage: string): AlterUserScramCredentialsResult {
  return { user, errorCode: ScramErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage };
}

/** The user's record key below the store's prefix; null for a name with a lone surrogate. */
export function userKeyOf(user: string): string | null {
  return user.isWellFormed() ? encodeURIComponent(user) : null;
}
