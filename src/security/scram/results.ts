/**
 * DescribeUserScramCredentials and AlterUserScramCredentials as plain data (the wire codecs map
 * to and from these), with Kafka's error codes and messages.
 */

/**
 * Kafka's error codes these answers use (Errors.java): the same numbers as the broker's ErrorCode
 * table, kept here so that security/ does not depend on broker/.
 */
export const ScramErrorCode = {
  NONE: 0,
  UNKNOWN_SERVER_ERROR: -1,
  REQUEST_TIMED_OUT: 7,
  UNSUPPORTED_SASL_MECHANISM: 33,
  RESOURCE_NOT_FOUND: 91,
  DUPLICATE_RESOURCE: 92,
  UNACCEPTABLE_CREDENTIAL: 93,
} as const;

export type ScramErrorCode = (typeof ScramErrorCode)[keyof typeof ScramErrorCode];

/** Kafka's messages: ScramImage.describe and ScramControlManager (KRaft). */
export const ScramMessage = {
  DESCRIBE_DUPLICATE_USER: 'Cannot describe SCRAM credentials for the same user twice in a single request: ',
  DESCRIBE_USER_THAT_DOES_NOT_EXIST: 'Attempt to describe a user credential that does not exist: ',
  ALTER_TWICE: 'A user credential cannot be altered twice in the same request',
  USERNAME_EMPTY: 'Username must not be empty',
  UNKNOWN_MECHANISM: 'Unknown SCRAM mechanism',
  TOO_FEW_ITERATIONS: 'Too few iterations',
  TOO_MANY_ITERATIONS: 'Too many iterations',
  DELETE_MISSING: 'Attempt to delete a user credential that does not exist',
} as const;

/** One mechanism a user has a credential for (never the credential itself). */
export interface ScramCredentialInfo {
  /** Kafka's type byte: 1 SCRAM-SHA-256, 2 SCRAM-SHA-512. */
  readonly mechanism: number;
  readonly iterations: number;
}

export interface DescribeUserScramCredentialsResult {
  readonly user: string;
  readonly errorCode: number;
  readonly errorMessage: string | null;
  readonly credentialInfos: readonly ScramCredentialInfo[];
}

export interface ScramCredentialDeletion {
  readonly name: string;
  /** Kafka's type byte; any other value is answered UNSUPPORTED_SASL_MECHANISM. */
  readonly mechanism: number;
}

/** A credential to set, as the admin client sends it: salted and hashed already. */
export interface ScramCredentialUpsertion {
  readonly name: string;
  readonly mechanism: number;
  readonly iterations: number;
  readonly salt: Uint8Array;
  readonly saltedPassword: Uint8Array;
}

export interface AlterUserScramCredentialsResult {
  readonly user: string;
  readonly errorCode: number;
  readonly errorMessage: string | null;
}
