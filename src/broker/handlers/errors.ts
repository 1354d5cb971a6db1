import { isFerryError } from '../../errors.ts';
import { ErrorCode, errorCodeFor } from '../protocol/error-codes.ts';

/** The Kafka error code for whatever a handler caught: Ferry's kinds by the one table, anything else unknown. */
export function errorCodeOf(error: unknown): number {
  return isFerryError(error) ? errorCodeFor(error.kind) : ErrorCode.UNKNOWN_SERVER_ERROR;
}
