import { type SaslHandshakeRequest, saslHandshakeRequestSchema, type SaslHandshakeResponse, saslHandshakeResponseSchema } from '../../protocol/messages/sasl-handshake.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/sasl-handshake.ts';

/**
 * SaslHandshake (key 17). v0 and v1 have the same body; the version says what follows: after v0
 * the SASL tokens travel as bare size-prefixed frames, after v1 inside SaslAuthenticate. Never
 * flexible (KAFKA-9577: clients up to 2.4 mis-negotiate a bump), so request header v1 and
 * response header v0 in both versions.
 */
export const saslHandshakeCodec = schemaApi<SaslHandshakeRequest, SaslHandshakeResponse>({
  name: 'SaslHandshake',
  minVersion: 0,
  maxVersion: 1,
  request: saslHandshakeRequestSchema,
  response: saslHandshakeResponseSchema,
});
