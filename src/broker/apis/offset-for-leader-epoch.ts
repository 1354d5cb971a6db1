import {
  type OffsetForLeaderEpochRequest,
  offsetForLeaderEpochRequestSchema,
  type OffsetForLeaderEpochResponse,
  offsetForLeaderEpochResponseSchema,
} from '../../protocol/messages/offset-for-leader-epoch.ts';
import { schemaApi } from './api.ts';

export type { OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse, OffsetForLeaderPartitionResult } from '../../protocol/messages/offset-for-leader-epoch.ts';

/**
 * OffsetForLeaderEpoch (key 23), versions 0-4 (4 flexible). KIP-101 / KIP-320: a consumer asks
 * where the epoch of its position ended; a position past that end offset means the log was
 * truncated under it (a leader change lost records it had seen). Before v3 the request has no
 * replica id and reads as -2, a "debug" consumer.
 */
export const offsetForLeaderEpochCodec = schemaApi<OffsetForLeaderEpochRequest, OffsetForLeaderEpochResponse>({
  name: 'OffsetForLeaderEpoch',
  minVersion: 0,
  maxVersion: 4,
  request: offsetForLeaderEpochRequestSchema,
  response: offsetForLeaderEpochResponseSchema,
});
