export {
  SCRAM_ITERATIONS_DEFAULT,
  SCRAM_ITERATIONS_MAX,
  SCRAM_ITERATIONS_MIN,
  SCRAM_MECHANISMS,
  SCRAM_SHA_256,
  SCRAM_SHA_512,
  scramMechanismNamed,
  scramMechanismOfType,
  type ScramMechanism,
} from './mechanism.ts';
export { scramCredentialFromPassword, scramCredentialFromSaltedPassword, type ScramCredential, type ScramCredentialLookup } from './credential.ts';
export { ScramCredentialStore, SCRAM_USERS_PREFIX, type ScramCredentialStoreOptions } from './store.ts';
export {
  ScramErrorCode,
  type AlterUserScramCredentialsResult,
  type DescribeUserScramCredentialsResult,
  type ScramCredentialDeletion,
  type ScramCredentialInfo,
  type ScramCredentialUpsertion,
} from './results.ts';
