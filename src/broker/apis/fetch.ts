import { type FetchRequest, fetchRequestSchema, type FetchResponse, fetchResponseSchema } from '../../protocol/messages/fetch.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/fetch.ts';

/** IsolationLevel values of a Fetch or ListOffsets request. */
export const IsolationLevel = {
  READ_UNCOMMITTED: 0,
  READ_COMMITTED: 1,
} as const;

/**
 * Fetch (key 1). Versions 0-3 read the old message formats and are not advertised (KIP-896), as
 * in Kafka 4. From v13 topics are named by their ids (KIP-516). Records go out as views of the
 * log, one chunk each, never copied.
 */
export const fetchCodec = schemaApi<FetchRequest, FetchResponse>({
  name: 'Fetch',
  minVersion: 4,
  maxVersion: 17,
  request: fetchRequestSchema,
  response: fetchResponseSchema,
});
