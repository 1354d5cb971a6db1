import { type JudgedOp, refusedAnswer, runFacts, apiOf, type RunFacts } from '../answer-model.ts';
import { isAclChangeOp, isGroupOp, isPartitionOp } from '../history.ts';
import type { HistoryIndex } from '../history-index.ts';
import type { PartitionRef, ViolationList } from '../violation.ts';

export const ANSWER_ALLOWED = 'answer-allowed';

/**
 * answer-allowed: every answer a legitimate client recorded is one Kafka gives that API, for that
 * request in that run (answer-model.ts): an error the API never answers, one that needs a condition
 * the run or the request lacks (an authorization error without an authorizer, a sequence error to
 * a plain producer), or an answer the client could not read (records that do not decode) is
 * reported. A Metadata answer's topic and partition errors are judged one by one. Requests that got
 * no answer are not judged, nor the SASL exchanges and intruders' requests (auth-accepted,
 * auth-refused and intruder-no-data judge those).
 */
export function checkAnswerAllowed(index: HistoryIndex, out: ViolationList): void {
  const run = runFacts(index.history);
  for (const op of index.history.ops) {
    if (op.kind === 'authenticate' || op.kind === 'intruder') continue;
    if (op.kind === 'metadata') for (const { topic, partition, error } of op.errors ?? []) judge(op, error, { topic, incarnation: 0, partition: partition ?? -1 }, run, out);
    if (!op.outcome.ok && op.outcome.answered) judge(op, op.outcome.error, whereOf(index, op), run, out);
  }
}

function judge(op: JudgedOp, error: string, where: PartitionRef, run: RunFacts, out: ViolationList): void {
  const refused = refusedAnswer(op, error, run);
  if (refused === null) return;
  const api = apiOf(op);
  out.add(ANSWER_ALLOWED, where, `${api} answered ${error}`, null, `${op.client}'s ${api} to node ${op.node} was answered ${error}: ${refused}`, op.startMs);
}

/** Where a violation is filed: the op's partition, its topic (-1: the whole topic), or the run (no topic). */
function whereOf(index: HistoryIndex, op: JudgedOp): PartitionRef {
  if (op.kind === 'request' || op.kind === 'metadata' || isGroupOp(op)) return { topic: '', incarnation: 0, partition: -1 };
  if (isAclChangeOp(op)) return { topic: op.resourceType === 'topic' ? op.resourceName : '', incarnation: 0, partition: -1 };
  const incarnation = index.incarnations.attribute(op.topic, op.startMs, op.endMs) ?? index.incarnations.last(op.topic);
  return { topic: op.topic, incarnation, partition: isPartitionOp(op) ? op.partition : -1 };
}
