import type { IntruderOp } from '../history.ts';
import type { HistoryIndex } from '../history-index.ts';
import type { PartitionRef, ViolationList } from '../violation.ts';
import { sightingsOf } from './value-sightings.ts';

export const INTRUDER_NO_DATA = 'intruder-no-data';

/** Kafka's answers to a request the ACLs refuse. */
export const AUTHORIZATION_ERRORS: ReadonlySet<string> = new Set(['TOPIC_AUTHORIZATION_FAILED', 'GROUP_AUTHORIZATION_FAILED', 'CLUSTER_AUTHORIZATION_FAILED', 'TRANSACTIONAL_ID_AUTHORIZATION_FAILED']);

/**
 * intruder-no-data (issue 13): nothing an intruder sends becomes data, and no data reaches it.
 * No value an intruder produced is ever read by a legitimate client, held by any replica's final
 * log or the tier, or found in a WAL object. No answer to an intruder carries a record, a
 * committed offset or a topic named without error (no intruder may describe any). The intruder
 * that authenticates as a user no ACL names is answered, when answered, only with an
 * authorization error (its Metadata is judged by the topics it lists instead), before anything
 * else is looked at: a refusal after, say, NOT_COORDINATOR or MEMBER_ID_REQUIRED would tell that
 * the request passed the check. And no legitimate OffsetFetch ever answers an offset an intruder
 * tried to commit.
 */
export function checkIntruderNoData(index: HistoryIndex, out: ViolationList): void {
  const intruderOps = index.history.ops.filter((op): op is IntruderOp => op.kind === 'intruder');
  if (intruderOps.length === 0) return;
  const values = new Set(intruderOps.flatMap((op) => op.values));
  const writers = new Map(intruderOps.flatMap((op) => op.values.map((value) => [value, op.client] as const)));
  for (const sighting of sightingsOf(index.history, values)) {
    out.add(
      INTRUDER_NO_DATA,
      where(sighting.topic, sighting.partition),
      "an intruder's record became data",
      sighting.offset,
      `"${sighting.value}" (sent by ${writers.get(sighting.value)}) ${sighting.where} at offset ${sighting.offset}`,
      sighting.atMs,
    );
  }
  for (const op of intruderOps) checkAnswer(op, out);
  const committed = new Set(intruderOps.flatMap((op) => (op.committedOffset === null ? [] : [op.committedOffset])));
  for (const op of index.history.ops) {
    if (op.kind !== 'offset-fetch' || !committed.has(op.offset)) continue;
    out.add(
      INTRUDER_NO_DATA,
      where(op.topic, op.partition),
      "an intruder's commit was fetched",
      op.offset,
      `${op.client} fetched ${op.group}'s committed offset ${op.offset} from node ${op.node}, an offset only an intruder committed`,
      op.endMs,
    );
  }
}

function checkAnswer(op: IntruderOp, out: ViolationList): void {
  const at = where(op.topic ?? '', op.partition ?? -1);
  const who = `${op.client} (${op.intruder})`;
  if (op.records.length > 0)
    out.add(
      INTRUDER_NO_DATA,
      at,
      'an intruder received records',
      op.records[0]!.offset,
      `${who} ${op.api} at node ${op.node} got ${op.records.length} record(s), the first "${op.records[0]!.value}" at offset ${op.records[0]!.offset}`,
      op.endMs,
    );
  if (op.offsets.length > 0)
    out.add(INTRUDER_NO_DATA, at, 'an intruder received a committed offset', op.offsets[0]!, `${who} ${op.api} of ${op.group} at node ${op.node} got committed offset ${op.offsets[0]}`, op.endMs);
  if (op.topics.length > 0)
    out.add(
      INTRUDER_NO_DATA,
      where(op.topics[0]!, -1),
      'an intruder was shown a topic',
      null,
      `${who} ${op.api} at node ${op.node} was answered topics ${op.topics.join(', ')} without an error`,
      op.endMs,
    );
  if (op.intruder !== 'no-acl' || op.authentication || op.api === 'Metadata') return;
  if (!op.outcome.ok && (!op.outcome.answered || AUTHORIZATION_ERRORS.has(op.outcome.error))) return;
  const answer = op.outcome.ok ? 'ok' : op.outcome.error;
  out.add(
    INTRUDER_NO_DATA,
    at,
    'an unauthorized request was not refused',
    null,
    `${who} ${op.api}${op.topic === null ? '' : ` of ${op.topic}${op.partition === null ? '' : `/${op.partition}`}`}${op.group === null ? '' : ` in ${op.group}`} at node ${op.node} on ${op.listener} was answered ${answer}, not an authorization error`,
    op.endMs,
  );
}

function where(topic: string, partition: number): PartitionRef {
  return { topic, incarnation: 0, partition };
}
