import {
  type DescribeUserScramCredentialsRequest,
  describeUserScramCredentialsRequestSchema,
  type DescribeUserScramCredentialsResponse,
  describeUserScramCredentialsResponseSchema,
} from '../../protocol/messages/describe-user-scram-credentials.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/describe-user-scram-credentials.ts';

/** DescribeUserScramCredentials (key 50): each user's SCRAM mechanisms and iterations, never the secrets; flexible from v0. */
export const describeUserScramCredentialsCodec = schemaApi<DescribeUserScramCredentialsRequest, DescribeUserScramCredentialsResponse>({
  name: 'DescribeUserScramCredentials',
  minVersion: 0,
  maxVersion: 0,
  request: describeUserScramCredentialsRequestSchema,
  response: describeUserScramCredentialsResponseSchema,
});
