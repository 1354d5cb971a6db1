import {
  type AlterUserScramCredentialsRequest,
  alterUserScramCredentialsRequestSchema,
  type AlterUserScramCredentialsResponse,
  alterUserScramCredentialsResponseSchema,
} from '../../protocol/messages/alter-user-scram-credentials.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/alter-user-scram-credentials.ts';

/**
 * AlterUserScramCredentials (key 51): deletes and upserts SCRAM credentials; flexible from v0.
 * An upsertion's `salt` and `saltedPassword` are views of the request frame, not copies.
 */
export const alterUserScramCredentialsCodec = schemaApi<AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse>({
  name: 'AlterUserScramCredentials',
  minVersion: 0,
  maxVersion: 0,
  request: alterUserScramCredentialsRequestSchema,
  response: alterUserScramCredentialsResponseSchema,
});
