import type { Clock } from '../util/clock.ts';
import type { Network } from '../util/network.ts';
import { regressed } from '../util/regressions.ts';
import { ProgressReporter } from './progress-reporter.ts';
import { definedOnly } from '../util/defined-only.ts';
import type { ListenerEndpoint } from './endpoints.ts';
import type { InterBrokerConnector } from './inter-broker-connection.ts';

/** A broker as far as reporting to it goes. */
export interface LeaderAddress {
  readonly nodeId: number;
  readonly host: string;
  readonly port: number;
  /** Its listeners, where the inter-broker one is looked up (absent: one listener at host and port). */
  readonly endpoints?: readonly ListenerEndpoint[];
}

export interface LeaderProgressOptions {
  /** This broker's node id: the replica id of its reports. */
  readonly replicaId: number;
  readonly clock: Clock;
  /** Where reports travel to leaders; the operating system's sockets by default. */
  readonly network?: Network;
  /** How reports reach a leader's inter-broker listener (TLS, SASL); plain TCP by default. */
  readonly connector?: InterBrokerConnector;
  /** The live broker leading the partition, as the last scan saw it; null while none does. */
  leaderOf(topic: string, partition: number): LeaderAddress | null;
  /** The leader's high watermark for a followed partition, from its answer to a report. */
  leaderHighWatermark(topic: string, partition: number, highWatermark: number): void;
  /**
   * The leader's log start for a followed partition, from its answer to a report, when above the
   * follower's: the follower serves nothing below it from now on (Ferry.followLogStart) [R6].
   */
  leaderLogStart(topic: string, partition: number, logStartOffset: number): void;
  /** Makes the reporter to one leader (tests replace it); `highWatermark` and `logStart` take its answers. */
  reporter?(
    replicaId: number,
    leader: LeaderAddress,
    highWatermark: (topic: string, partition: number, highWatermark: number) => void,
    logStart: (topic: string, partition: number, logStartOffset: number) => void,
  ): Pick<ProgressReporter, 'report' | 'forget' | 'close'>;
}

interface Followed {
  readonly topic: string;
  readonly partition: number;
  readonly logEndOffset: () => number;
  /** Where its log starts now: reported with the log end, and again whenever it moves [R6]. */
  readonly logStartOffset: () => number;
  /** The leader epoch the partition follows now (updated after each scan, [R3]): every report names it [R2]. */
  readonly leaderEpoch: () => number;
  /** The leader its reports go to (leaderKey), or null while it has none. */
  leader: string | null;
  /** The epoch its last report to that leader named. */
  reportedEpoch: number;
  /** The log start its last report named. */
  reportedLogStart: number;
}

/**
 * The follower side of min.insync.replicas in a cluster (docs/cluster-protocol.md, "Replication
 * factor > 1", steps R1-R3): every partition this broker follows reports its log end to whichever
 * broker leads it now. One reporter (one connection) per leader serves all partitions it leads;
 * after each scan the reports of a partition whose leader changed move to the new leader at once,
 * with the current log end, and a reporter left with nothing to report closes.
 */
export class LeaderProgress {
  readonly #options: LeaderProgressOptions;
  readonly #followed = new Map<string, Followed>();
  readonly #reporters = new Map<string, Pick<ProgressReporter, 'report' | 'forget' | 'close'>>();
  /** Closed for good (the broker stopped): a follow still in flight when it stopped reports to nobody. */
  #closed = false;

  constructor(options: LeaderProgressOptions) {
    this.#options = options;
  }

  /**
   * [R1] Starts reporting a followed partition to its leader; `logEndOffset` reads its log end now,
   * `leaderEpoch` the epoch of the leader it follows now, `logStartOffset` its log start now.
   */
  follow(topic: string, partition: number, logEndOffset: () => number, leaderEpoch: () => number, logStartOffset: () => number): void {
    if (this.#closed) return;
    this.#followed.set(key(topic, partition), { topic, partition, logEndOffset, logStartOffset, leaderEpoch, leader: null, reportedEpoch: -1, reportedLogStart: -1 });
    this.#retarget(this.#followed.get(key(topic, partition))!);
  }

  /** [R1] The partition applied more: its leader hears the new log end. */
  applied(topic: string, partition: number): void {
    const followed = this.#followed.get(key(topic, partition));
    if (followed === undefined) return;
    const reporter = followed.leader === null ? undefined : this.#reporters.get(followed.leader);
    if (reporter !== undefined) this.#report(reporter, followed);
  }

  /** [R6] The partition's log start may have moved (a scan read the leader's, an answer named it): its leader hears of a move. */
  logStartMoved(topic: string, partition: number): void {
    const followed = this.#followed.get(key(topic, partition));
    if (followed === undefined || followed.logStartOffset() === followed.reportedLogStart) return; // nothing new: no report (an answer naming a start the log cannot reach yet would otherwise loop)
    this.applied(topic, partition);
  }

  unfollow(topic: string, partition: number): void {
    const followed = this.#followed.get(key(topic, partition));
    if (followed === undefined) return;
    this.#followed.delete(key(topic, partition));
    this.#detach(followed);
  }

  /** Stops reporting every partition of a deleted topic; returns the partitions it followed. */
  unfollowTopic(topic: string): number[] {
    const partitions = [...this.#followed.values()].filter((f) => f.topic === topic).map((f) => f.partition);
    for (const partition of partitions) this.unfollow(topic, partition);
    return partitions;
  }

  /** [R3] After a scan: partitions whose leader changed report to the new one; those whose leader epoch changed report again in it. */
  retarget(): void {
    if (regressed('follower-reports-to-old-leader')) return; // the reporter stays the one `follow` made
    for (const followed of this.#followed.values()) this.#retarget(followed);
  }

  close(): void {
    this.#closed = true;
    for (const reporter of this.#reporters.values()) reporter.close();
    this.#reporters.clear();
    this.#followed.clear();
  }

  /** The leader a partition's reports go to now (for tests and logs). */
  reportingTo(topic: string, partition: number): string | null {
    return this.#followed.get(key(topic, partition))?.leader ?? null;
  }

  #retarget(followed: Followed): void {
    const leader = this.#options.leaderOf(followed.topic, followed.partition);
    const next = leader === null ? null : leaderKey(leader);
    if (next === followed.leader) {
      // The same leader in a new epoch (it claimed the partition again, [C7]): reports of the old epoch are refused.
      const reporter = next === null ? undefined : this.#reporters.get(next);
      if (reporter !== undefined && followed.leaderEpoch() !== followed.reportedEpoch) this.#report(reporter, followed);
      return;
    }
    this.#detach(followed);
    followed.leader = next;
    if (leader === null || next === null) return;
    let reporter = this.#reporters.get(next);
    if (reporter === undefined) {
      const make =
        this.#options.reporter ??
        ((replicaId, to, highWatermark, logStart) =>
          new ProgressReporter(replicaId, to.host, to.port, {
            clock: this.#options.clock,
            highWatermark,
            logStart,
            ...definedOnly({ network: this.#options.network, connector: this.#options.connector, endpoints: to.endpoints }),
          }));
      reporter = make(
        this.#options.replicaId,
        leader,
        (topic, partition, highWatermark) => this.#answered(next, topic, partition, highWatermark),
        (topic, partition, logStart) => this.#answeredLogStart(next, topic, partition, logStart),
      );
      this.#reporters.set(next, reporter);
    }
    this.#report(reporter, followed);
  }

  #report(reporter: Pick<ProgressReporter, 'report'>, followed: Followed): void {
    followed.reportedEpoch = followed.leaderEpoch();
    followed.reportedLogStart = followed.logStartOffset();
    reporter.report(followed.topic, followed.partition, followed.logEndOffset(), followed.reportedEpoch, followed.reportedLogStart);
  }

  /** A leader's answer counts only while the partition still reports to that leader. */
  #answered(leader: string, topic: string, partition: number, highWatermark: number): void {
    if (this.#followed.get(key(topic, partition))?.leader === leader) this.#options.leaderHighWatermark(topic, partition, highWatermark);
  }

  /**
   * [R6] A leader's answer names a log start: one above the follower's is taken up at once (the
   * leader's DeleteRecords waits for it), and the follower's new start reported back. Counted only
   * while the partition still reports to that leader.
   */
  #answeredLogStart(leader: string, topic: string, partition: number, logStartOffset: number): void {
    const followed = this.#followed.get(key(topic, partition));
    if (followed?.leader !== leader) return;
    if (logStartOffset > followed.logStartOffset()) this.#options.leaderLogStart(topic, partition, logStartOffset);
    this.logStartMoved(topic, partition);
  }

  /** Takes the partition off its current reporter, closing a reporter left with none. */
  #detach(followed: Followed): void {
    const current = followed.leader;
    if (current === null) return;
    followed.leader = null;
    this.#reporters.get(current)?.forget(followed.topic, followed.partition);
    if (![...this.#followed.values()].some((f) => f.leader === current)) {
      this.#reporters.get(current)?.close();
      this.#reporters.delete(current);
    }
  }
}

function key(topic: string, partition: number): string {
  return `${topic}/${partition}`;
}

/** A leader is its node id at its registered address: a broker restarted elsewhere gets a new reporter. */
function leaderKey(leader: LeaderAddress): string {
  return `${leader.nodeId}@${leader.host}:${leader.port}`;
}
