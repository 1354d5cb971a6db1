import type { ClientOp, ProduceOp } from './history.ts';
import { countAtMost } from './incarnations.ts';

/** One producer session's batches on one partition, by sequence. */
interface SessionBatches {
  /** Base sequences, ascending. */
  readonly sequences: number[];
  /** firstSentMs[i]: when the batch of sequences[i] was first sent. */
  readonly firstSentMs: number[];
  /** suffixMinMs[i]: the earliest first send among batches i and after (a scan stops once nothing later was sent in time). */
  readonly suffixMinMs: number[];
}

/**
 * Each idempotent producer's batches on each partition, by producer id, epoch and sequence, over
 * every incarnation of the topic (one incarnation's count only errs high): how many batches a
 * producer may have appended after one of its batches by a given time. Built once per history.
 */
export class IdempotentBatches {
  readonly #sessions = new Map<string, SessionBatches>();
  /** By topic, partition and producer id: each epoch's first send. */
  readonly #epochs = new Map<string, Map<number, number>>();

  constructor(ops: readonly ClientOp[]) {
    const firstSent = new Map<string, Map<number, number>>();
    for (const op of ops) {
      if (op.kind !== 'produce' || op.idempotence === null) continue;
      const session = sessionKey(op, op.idempotence.producerEpoch);
      let sent = firstSent.get(session);
      if (sent === undefined) firstSent.set(session, (sent = new Map()));
      sent.set(op.idempotence.baseSequence, Math.min(sent.get(op.idempotence.baseSequence) ?? Infinity, op.startMs));
      const producer = sessionKey(op, null);
      let epochs = this.#epochs.get(producer);
      if (epochs === undefined) this.#epochs.set(producer, (epochs = new Map()));
      epochs.set(op.idempotence.producerEpoch, Math.min(epochs.get(op.idempotence.producerEpoch) ?? Infinity, op.startMs));
    }
    for (const [session, sent] of firstSent) this.#sessions.set(session, sessionBatches(sent));
  }

  /**
   * How many batches of `op`'s session (producer id and epoch) on its partition with a higher
   * sequence than `op`'s were first sent before `atMs`, counting up to `limit`; Infinity when a
   * later epoch of its producer id was first sent there before `atMs` (the broker may have taken
   * that, and dropped the older epoch's batches).
   */
  sentAfter(op: ProduceOp, atMs: number, limit: number): number {
    const { producerEpoch, baseSequence } = op.idempotence!;
    for (const [epoch, firstSentMs] of this.#epochs.get(sessionKey(op, null)) ?? []) if (epoch > producerEpoch && firstSentMs < atMs) return Infinity;
    const session = this.#sessions.get(sessionKey(op, producerEpoch));
    if (session === undefined) return 0;
    let count = 0;
    for (let i = countAtMost(session.sequences, baseSequence); i < session.sequences.length && count < limit && session.suffixMinMs[i]! < atMs; i++) {
      if (session.firstSentMs[i]! < atMs) count++;
    }
    return count;
  }
}

function sessionKey(op: ProduceOp, epoch: number | null): string {
  return `${op.topic}\u0000${op.partition}\u0000${op.idempotence!.producerId}\u0000${epoch ?? ''}`;
}

function sessionBatches(sent: ReadonlyMap<number, number>): SessionBatches {
  const sequences = [...sent.keys()].sort((a, b) => a - b);
  const firstSentMs = sequences.map((sequence) => sent.get(sequence)!);
  const suffixMinMs = [...firstSentMs];
  for (let i = suffixMinMs.length - 2; i >= 0; i--) suffixMinMs[i] = Math.min(suffixMinMs[i]!, suffixMinMs[i + 1]!);
  return { sequences, firstSentMs, suffixMinMs };
}
