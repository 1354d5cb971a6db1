/** A request's Outcome as the history records it, from a Kafka error code or from no answer. */
import { ErrorCode } from '../../protocol/error-codes.ts';
import type { Outcome, RequestOp } from '../history.ts';
import { errorName } from './api.ts';
import type { UnansweredError } from './connection.ts';
import type { NodeReply } from './brokers.ts';
import type { ClientContext } from './context.ts';

const OK: Outcome = { ok: true };

export function answeredOutcome(code: number): Outcome {
  return code === ErrorCode.NONE ? OK : { ok: false, error: errorName(code), answered: true };
}

export function unansweredOutcome(error: UnansweredError): Outcome {
  return { ok: false, error, answered: false };
}

/**
 * Records a request whose answer no other op records (a group API, InitProducerId) as a
 * RequestOp; `codeOf` reads the answer's error code.
 */
export function recordRequest<Response>(context: ClientContext, api: string, group: string | null, startMs: number, reply: NodeReply<Response>, codeOf: (response: Response) => number): void {
  const outcome = reply.answered ? answeredOutcome(codeOf(reply.response)) : unansweredOutcome(reply.error);
  const op: RequestOp = { kind: 'request', client: context.name, node: reply.node, startMs, endMs: context.now(), outcome, api, group };
  context.record(op);
}
