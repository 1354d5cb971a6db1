import { type FindCoordinatorRequest, findCoordinatorRequestSchema, type FindCoordinatorResponse, findCoordinatorResponseSchema } from '../../protocol/messages/find-coordinator.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/find-coordinator.ts';

/** CoordinatorType values of a FindCoordinator request. */
export const CoordinatorKeyType = {
  GROUP: 0,
  TRANSACTION: 1,
} as const;

/** FindCoordinator (key 10). From v4 a request names several keys and the response a coordinator for each. */
export const findCoordinatorCodec = schemaApi<FindCoordinatorRequest, FindCoordinatorResponse>({
  name: 'FindCoordinator',
  minVersion: 0,
  maxVersion: 6,
  request: findCoordinatorRequestSchema,
  response: findCoordinatorResponseSchema,
});
