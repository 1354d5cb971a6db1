import { type SaslAuthenticateRequest, saslAuthenticateRequestSchema, type SaslAuthenticateResponse, saslAuthenticateResponseSchema } from '../../protocol/messages/sasl-authenticate.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/sasl-authenticate.ts';

/**
 * SaslAuthenticate (key 36): one SASL token each way. v1 adds the session lifetime, v2 is the
 * first flexible version. The request's `authBytes` is a view of the request frame, not a copy.
 */
export const saslAuthenticateCodec = schemaApi<SaslAuthenticateRequest, SaslAuthenticateResponse>({
  name: 'SaslAuthenticate',
  minVersion: 0,
  maxVersion: 2,
  request: saslAuthenticateRequestSchema,
  response: saslAuthenticateResponseSchema,
});
