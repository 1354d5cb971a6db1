/**
 * The client side of the security APIs the simulated clients use (issues 13 and 25): ApiVersions
 * v0 (what a client may send before SaslHandshake), SaslHandshake v0 (the tokens follow as bare
 * frames) and v1 (in SaslAuthenticate), SaslAuthenticate v1 (with session_lifetime_ms, KIP-368),
 * CreateAcls, DeleteAcls and DescribeAcls v1, AlterUserScramCredentials v0 (flexible: every
 * version is), and AlterClientQuotas and DescribeClientQuotas v0.
 */
import { type AlterClientQuotasRequest, alterClientQuotasRequestSchema, type AlterClientQuotasResponse, alterClientQuotasResponseSchema } from '../../protocol/messages/alter-client-quotas.ts';
import {
  type AlterUserScramCredentialsRequest,
  alterUserScramCredentialsRequestSchema,
  type AlterUserScramCredentialsResponse,
  alterUserScramCredentialsResponseSchema,
} from '../../protocol/messages/alter-user-scram-credentials.ts';
import { type ApiVersionsRequest, apiVersionsRequestSchema, type ApiVersionsResponse, apiVersionsResponseSchema } from '../../protocol/messages/api-versions.ts';
import { type CreateAclsRequest, createAclsRequestSchema, type CreateAclsResponse, createAclsResponseSchema } from '../../protocol/messages/create-acls.ts';
import { type DeleteAclsRequest, deleteAclsRequestSchema, type DeleteAclsResponse, deleteAclsResponseSchema } from '../../protocol/messages/delete-acls.ts';
import { type DescribeAclsRequest, describeAclsRequestSchema, type DescribeAclsResponse, describeAclsResponseSchema } from '../../protocol/messages/describe-acls.ts';
import {
  type DescribeClientQuotasRequest,
  describeClientQuotasRequestSchema,
  type DescribeClientQuotasResponse,
  describeClientQuotasResponseSchema,
} from '../../protocol/messages/describe-client-quotas.ts';
import { type SaslAuthenticateRequest, saslAuthenticateRequestSchema, type SaslAuthenticateResponse, saslAuthenticateResponseSchema } from '../../protocol/messages/sasl-authenticate.ts';
import { type SaslHandshakeRequest, saslHandshakeRequestSchema, type SaslHandshakeResponse, saslHandshakeResponseSchema } from '../../protocol/messages/sasl-handshake.ts';
import { schemaClientApi } from './api.ts';

export const apiVersionsApi = schemaClientApi<ApiVersionsRequest, ApiVersionsResponse>('ApiVersions', 0, apiVersionsRequestSchema, apiVersionsResponseSchema);
/** v0: the tokens that follow are bare size-prefixed frames, answered the same way (KIP-43's first form). */
export const saslHandshakeV0Api = schemaClientApi<SaslHandshakeRequest, SaslHandshakeResponse>('SaslHandshake', 0, saslHandshakeRequestSchema, saslHandshakeResponseSchema);
export const saslHandshakeApi = schemaClientApi<SaslHandshakeRequest, SaslHandshakeResponse>('SaslHandshake', 1, saslHandshakeRequestSchema, saslHandshakeResponseSchema);
export const saslAuthenticateApi = schemaClientApi<SaslAuthenticateRequest, SaslAuthenticateResponse>('SaslAuthenticate', 1, saslAuthenticateRequestSchema, saslAuthenticateResponseSchema);
export const createAclsApi = schemaClientApi<CreateAclsRequest, CreateAclsResponse>('CreateAcls', 1, createAclsRequestSchema, createAclsResponseSchema);
export const deleteAclsApi = schemaClientApi<DeleteAclsRequest, DeleteAclsResponse>('DeleteAcls', 1, deleteAclsRequestSchema, deleteAclsResponseSchema);
export const describeAclsApi = schemaClientApi<DescribeAclsRequest, DescribeAclsResponse>('DescribeAcls', 1, describeAclsRequestSchema, describeAclsResponseSchema);
export const alterUserScramCredentialsApi = schemaClientApi<AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse>(
  'AlterUserScramCredentials',
  0,
  alterUserScramCredentialsRequestSchema,
  alterUserScramCredentialsResponseSchema,
);
export const alterClientQuotasApi = schemaClientApi<AlterClientQuotasRequest, AlterClientQuotasResponse>('AlterClientQuotas', 0, alterClientQuotasRequestSchema, alterClientQuotasResponseSchema);
export const describeClientQuotasApi = schemaClientApi<DescribeClientQuotasRequest, DescribeClientQuotasResponse>(
  'DescribeClientQuotas',
  0,
  describeClientQuotasRequestSchema,
  describeClientQuotasResponseSchema,
);
