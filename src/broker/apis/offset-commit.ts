import { type OffsetCommitRequest, offsetCommitRequestSchema, type OffsetCommitResponse, offsetCommitResponseSchema } from '../../protocol/messages/offset-commit.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/offset-commit.ts';

/** OffsetCommit (key 8). */
export const offsetCommitCodec = schemaApi<OffsetCommitRequest, OffsetCommitResponse>({
  name: 'OffsetCommit',
  minVersion: 0,
  maxVersion: 9,
  request: offsetCommitRequestSchema,
  response: offsetCommitResponseSchema,
});
