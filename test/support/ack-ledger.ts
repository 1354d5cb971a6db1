// What a fault run acknowledged, and what it read back: every acknowledged record must be read
// back exactly once, at the offset its acknowledgement named ("acknowledged means durable,
// exactly once, at the offset the ack named").

export interface AckedRecord {
  readonly topic: string;
  readonly partition: number;
  readonly offset: number;
  /** Unique per record sent in a run. */
  readonly value: string;
}

export interface LedgerVerdict {
  /** Acknowledged, never read back. */
  readonly lost: AckedRecord[];
  /** Read back more than once (the same value at two offsets). */
  readonly duplicated: { value: string; offsets: number[] }[];
  /** Read back, but at another offset or partition than its acknowledgement named. */
  readonly misplaced: { acked: AckedRecord; readAt: AckedRecord }[];
  readonly acknowledged: number;
  readonly read: number;
}

export class AckLedger {
  readonly #acked = new Map<string, AckedRecord>();

  /** An acknowledgement: `value` was written to `topic`-`partition` at `offset`. */
  acked(record: AckedRecord): void {
    const earlier = this.#acked.get(record.value);
    if (earlier !== undefined && (earlier.offset !== record.offset || earlier.partition !== record.partition)) {
      throw new Error(`${record.value} acknowledged twice, at ${earlier.partition}/${earlier.offset} and ${record.partition}/${record.offset}`);
    }
    this.#acked.set(record.value, record);
  }

  get size(): number {
    return this.#acked.size;
  }

  /** Compares the acknowledgements with everything read back from the topic(s). */
  verify(read: readonly AckedRecord[]): LedgerVerdict {
    const byValue = new Map<string, AckedRecord[]>();
    for (const record of read) byValue.set(record.value, [...(byValue.get(record.value) ?? []), record]);
    const lost: AckedRecord[] = [];
    const misplaced: { acked: AckedRecord; readAt: AckedRecord }[] = [];
    for (const acked of this.#acked.values()) {
      const found = byValue.get(acked.value);
      if (found === undefined) lost.push(acked);
      else if (!found.some((r) => r.topic === acked.topic && r.partition === acked.partition && r.offset === acked.offset)) misplaced.push({ acked, readAt: found[0]! });
    }
    const duplicated = [...byValue].filter(([, records]) => records.length > 1).map(([value, records]) => ({ value, offsets: records.map((r) => r.offset) }));
    return { lost, duplicated, misplaced, acknowledged: this.#acked.size, read: read.length };
  }
}

/** One line for a note or a failure message. */
export function describeVerdict(verdict: LedgerVerdict): string {
  return (
    `${verdict.acknowledged} acknowledged, ${verdict.read} read back: ${verdict.lost.length} lost, ${verdict.duplicated.length} duplicated, ${verdict.misplaced.length} misplaced` +
    (verdict.lost.length > 0 ? `; first lost ${JSON.stringify(verdict.lost[0])}` : '') +
    (verdict.duplicated.length > 0 ? `; first duplicated ${JSON.stringify(verdict.duplicated[0])}` : '') +
    (verdict.misplaced.length > 0 ? `; first misplaced ${JSON.stringify(verdict.misplaced[0])}` : '')
  );
}
