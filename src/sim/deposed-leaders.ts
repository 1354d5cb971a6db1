import type { LeaseHistory, PartitionRecordWrite } from './history.ts';

/** A process's name is `broker-<node id>#<start>` (SimBrokerHost's gates). */
const PROCESS_NODE = /^broker-(\d+)#/;

/**
 * Whether a broker process answering as a partition's leader had been deposed: before its answer,
 * the store took another process's write of the partition record at a higher leader epoch than
 * the answering process's latest claim. Such a process may still act within its own lease (a
 * renewal that landed after another broker's scan judged it dead: docs/cluster-protocol.md C1;
 * the seal fences what it writes), answering from a log the new leader has written past.
 */
export class DeposedLeaders {
  readonly #writes = new Map<string, PartitionRecordWrite[]>();

  constructor(leases: LeaseHistory | undefined) {
    for (const write of leases?.partitionWrites ?? []) {
      const key = `${write.topic}/${write.partition}`;
      let list = this.#writes.get(key);
      if (list === undefined) this.#writes.set(key, (list = []));
      list.push(write);
    }
  }

  deposed(topic: string, partition: number, process: string, atMs: number): boolean {
    const node = Number(PROCESS_NODE.exec(process)?.[1] ?? Number.NaN);
    const taken = (this.#writes.get(`${topic}/${partition}`) ?? []).filter((write) => write.takenMs <= atMs);
    const claims = taken.filter((write) => write.process === process && write.leader === node);
    const claimedEpoch = claims.length === 0 ? -1 : Math.max(...claims.map((write) => write.leaderEpoch));
    return claims.length > 0 && taken.some((write) => write.process !== process && write.leaderEpoch > claimedEpoch);
  }
}
