import { healthySinceOf } from '../health-since.ts';
import type { AlterConfigsOp, ProduceOp } from '../history.ts';
import { type HistoryIndex, metadataPropagationMs, type PartitionHistory } from '../history-index.ts';
import type { ViolationList } from '../violation.ts';

export const CONFIG_APPLIED = 'config-applied';

const TIMESTAMP_TYPE = 'message.timestamp.type';
const LOG_APPEND_TIME = 'LogAppendTime';
/** A topic's timestamp type before any alter (Kafka's default; the workload creates topics without it). */
const DEFAULT_TIMESTAMP_TYPE = 'CreateTime';
/** Answers after which an alter may still have taken effect (the broker gave up waiting, or no answer came). */
const OUTCOME_UNKNOWN = 'REQUEST_TIMED_OUT';
const NOT_SENT = 'not-sent';

/**
 * config-applied (issue 12): a topic's `message.timestamp.type` takes effect live. A record
 * acknowledged to a produce that started after an IncrementalAlterConfigs of it was answered with
 * success reads back with that timestamp type (LogAppendTime: the leader stamped its batch), once
 * the alter had the propagation bound to reach every broker (metadataPropagationMs) and the
 * broker that took the produce had been healthy for as long (one cut from the control store
 * appends by the configs it last read). Before any alter, the type is CreateTime. Judged only
 * where no other alter of it may have taken effect in between (its order against the judged one
 * is unknown), and only for values sent in one request (a retry may have written the value before).
 */
export function checkConfigApplied(index: HistoryIndex, out: ViolationList): void {
  const alters = index.history.ops.filter((op): op is AlterConfigsOp => op.kind === 'alter-configs' && op.configs.some((config) => config.name === TIMESTAMP_TYPE) && mayHaveTakenEffect(op));
  if (alters.length === 0) return;
  const propagationMs = metadataPropagationMs(index.history);
  const healthySince = healthySinceOf(index.history.health);
  for (const partition of index.partitions) {
    const own = alters.filter((op) => op.topic === partition.topic);
    if (own.length === 0) continue;
    const inIncarnation = own.filter((op) => index.incarnations.attribute(op.topic, op.startMs, op.endMs) === partition.incarnation);
    const expected = new Map<string, { type: string; by: AlterConfigsOp | null; produce: ProduceOp }>();
    for (const produce of partition.produces) {
      if (!produce.outcome.ok || produce.acks === 0) continue;
      if (healthySince(produce.node, produce.startMs) + propagationMs >= produce.startMs) continue;
      const type = expectedType(own, inIncarnation, produce, propagationMs);
      if (type === null) continue;
      for (const value of produce.values) if (index.requestsPerValue.get(value) === 1) expected.set(value, { ...type, produce });
    }
    if (expected.size > 0) checkReads(partition, expected, out);
  }
}

function mayHaveTakenEffect(op: AlterConfigsOp): boolean {
  return op.outcome.ok || op.outcome.error === OUTCOME_UNKNOWN || (!op.outcome.answered && op.outcome.error !== NOT_SENT);
}

function typeSetBy(op: AlterConfigsOp): string {
  return op.configs.find((config) => config.name === TIMESTAMP_TYPE)!.value ?? DEFAULT_TIMESTAMP_TYPE; // DELETE: back to the default
}

/**
 * The type `produce`'s batch must carry, and the alter that set it (null: the default); null when
 * it is unknown (an alter of the topic may have taken effect around the produce, in any order).
 */
function expectedType(all: readonly AlterConfigsOp[], inIncarnation: readonly AlterConfigsOp[], produce: ProduceOp, propagationMs: number): { type: string; by: AlterConfigsOp | null } | null {
  let last: AlterConfigsOp | null = null;
  for (const op of inIncarnation) if (op.outcome.ok && op.endMs + propagationMs < produce.startMs && (last === null || op.endMs > last.endMs)) last = op;
  const rivals = all.filter((op) => op !== last && op.startMs <= produce.endMs && (last === null || op.endMs >= last.startMs));
  if (rivals.length > 0) return null;
  return last === null ? { type: DEFAULT_TIMESTAMP_TYPE, by: null } : { type: typeSetBy(last), by: last };
}

function checkReads(partition: PartitionHistory, expected: ReadonlyMap<string, { type: string; by: AlterConfigsOp | null; produce: ProduceOp }>, out: ViolationList): void {
  for (const fetch of partition.fetches) {
    if (!fetch.outcome.ok) continue;
    for (const record of fetch.records) {
      const wanted = expected.get(record.value);
      if (wanted === undefined) continue;
      const read = record.logAppendTime === true ? LOG_APPEND_TIME : DEFAULT_TIMESTAMP_TYPE;
      if (read === wanted.type) continue;
      const since = wanted.by === null ? 'with no alter of it before' : `after ${wanted.by.client}'s alter to ${wanted.type} was answered at ${Math.round(wanted.by.endMs)} ms`;
      out.add(
        CONFIG_APPLIED,
        partition,
        'timestamp type not applied',
        record.offset,
        `"${record.value}", produced to node ${wanted.produce.node} ${since}, read back from node ${fetch.node} as ${read}`,
        fetch.endMs,
      );
    }
  }
}
