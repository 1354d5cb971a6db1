import { type HeartbeatRequest, heartbeatRequestSchema, type HeartbeatResponse, heartbeatResponseSchema } from '../../protocol/messages/heartbeat.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/heartbeat.ts';

/** Heartbeat (key 12). */
export const heartbeatCodec = schemaApi<HeartbeatRequest, HeartbeatResponse>({
  name: 'Heartbeat',
  minVersion: 0,
  maxVersion: 4,
  request: heartbeatRequestSchema,
  response: heartbeatResponseSchema,
});
