/** A request's Outcome as the history records it, from a Kafka error code or from no answer. */
import { ErrorCode } from '../../broker/protocol/error-codes.ts';
import type { Outcome } from '../history.ts';
import { errorName } from './api.ts';
import type { UnansweredError } from './connection.ts';

const OK: Outcome = { ok: true };

export function answeredOutcome(code: number): Outcome {
  return code === ErrorCode.NONE ? OK : { ok: false, error: errorName(code), answered: true };
}

export function unansweredOutcome(error: UnansweredError): Outcome {
  return { ok: false, error, answered: false };
}
