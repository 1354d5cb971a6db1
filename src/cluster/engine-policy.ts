import type { ControlStore } from '../control/control-store.ts';
import { FerryError } from '../errors.ts';
import type { ClusterPolicy } from '../engine/index.ts';
import type { DeletedIncarnations } from '../tier/deleted-incarnations.ts';
import { assert } from '../util/assert.ts';
import type { Uuid } from '../util/uuid.ts';
import type { IncarnationState } from '../wal-gc/coverage.ts';
import type { WriterLiveness } from '../wal-gc/orphan-writers.ts';
import { pickByHash } from './coordinator-hash.ts';
import type { TopicRecord } from './control-records.ts';
import type { ClusterNode } from './node.ts';

/** What the policy reads once its broker joined the cluster: the node and the records it keeps. */
interface Joined {
  readonly node: ClusterNode;
  readonly control: ControlStore;
  readonly deletions: DeletedIncarnations;
}

/**
 * The cluster's side of an engine it manages (ClusterPolicy): given to the engine at open, before
 * the broker's listeners (and so its address and its ClusterNode) exist, and joined once by
 * clusterMember. Until then the broker holds no lease, so it may not lead [C1]; it counts no
 * followers, collects no other writer's streams, and keeps every incarnation (GI1).
 */
export class ClusterEnginePolicy implements ClusterPolicy {
  readonly #nodeId: number;
  #joined: Joined | null = null;

  constructor(nodeId: number) {
    this.#nodeId = nodeId;
  }

  /** The broker's ClusterNode exists now: the policy answers from its lease and records from here on. Once only. */
  join(joined: Joined): void {
    assert(this.#joined === null, 'a broker joins its cluster once');
    this.#joined = joined;
  }

  checkLeadership(topic: string, topicId: Uuid): void {
    const node = this.#joined?.node;
    if (node === undefined || !node.leaseHeld()) throw new FerryError('NotLeader', `broker ${this.#nodeId} is not acting as leader: its lease may have lapsed and is not renewed yet`);
    if (!node.topicSightingStands(topic, topicId))
      throw new FerryError('NotLeader', `broker ${this.#nodeId} is not acting as leader on topic ${topic}: it has not seen the topic in the control store within its lease`);
  }

  /** A leader partition counts only its replica set's followers with a live lease (src/partition/isr.ts I1). */
  followersOf(topic: string, partition: number): ReadonlySet<string> {
    const node = this.#joined?.node;
    return new Set(node?.followersOf(topic, partition).map((broker) => `broker-${broker.nodeId}`) ?? []);
  }

  /**
   * GI1, DI1: the WAL collector takes an incarnation's frames for its deletion only on its deletion
   * record; a topic record naming it (a fresh read) keeps them live, and no record at all keeps them too.
   */
  async incarnationState(topic: string, topicId: Uuid): Promise<IncarnationState> {
    const joined = this.#joined;
    if (joined === null) return 'live'; // without the cluster's word every incarnation is kept
    if (await joined.deletions.isDeleted(topicId)) return 'deleted';
    return (await joined.control.read<TopicRecord>(`topics/${topic}`))?.value.topicId === topicId ? 'live' : 'unknown';
  }

  adopting(): boolean {
    return this.#joined?.node.adopting() ?? false;
  }

  readonly writerLiveness: WriterLiveness = {
    liveWriterIds: () => new Set(this.#joined?.node.liveBrokers().map((broker) => broker.stream.writerId) ?? []),
    picks: (writerId) => {
      const node = this.#joined?.node;
      return node !== undefined && pickByHash(writerId, node.liveBrokers())?.nodeId === this.#nodeId;
    },
  };
}
