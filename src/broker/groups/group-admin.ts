import { isFerryError } from '../../errors.ts';
import { isStoreError } from '../../store/errors.ts';
import { isOsError } from '../../util/os-error.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';
import { subscribedTopics } from './consumer-subscription.ts';
import type { GroupCoordinator, GroupState, MemberSummary } from './coordinator.ts';
import type { GroupOffset, GroupOffsetStore } from './offset-store.ts';

/** The protocol type of Kafka's consumers: only their metadata names subscribed topics. */
export const CONSUMER_PROTOCOL_TYPE = 'consumer';
/** Group records read at once when listing (a control-record read each in a cluster). */
export const GROUP_READS_IN_FLIGHT_MAX = 16;

/** A group as ListGroups names it: Dead never appears (a group that does not exist is not listed). */
export interface GroupListing {
  readonly groupId: string;
  readonly protocolType: string;
  readonly state: GroupState;
}

/** A group as DescribeGroups shows it; Dead (no members, empty strings) for one that does not exist. */
export interface GroupDescription {
  readonly state: GroupState | 'Dead';
  readonly protocolType: string;
  readonly protocolName: string;
  readonly members: readonly MemberSummary[];
}

export interface GroupAdminOptions {
  readonly groups: GroupCoordinator;
  readonly offsets: GroupOffsetStore;
  /** Whether this broker coordinates the group (its requests belong here). */
  readonly coordinates: (groupId: string) => boolean;
}

/** OffsetDelete's answer: a top-level error (then no partitions), or one error per partition asked for. */
export interface OffsetDeleteResult {
  readonly errorCode: number;
  readonly topics: readonly { readonly name: string; readonly partitions: readonly { readonly partitionIndex: number; readonly errorCode: number }[] }[];
}

/**
 * The admin side of the group coordinator, as Kafka's classic groups answer it: the groups this
 * broker coordinates (held in memory, or known only by committed offsets, as a simple consumer's
 * that used assign and commit: such a group is Empty), their description, and the deletion of
 * empty groups and of offsets no live member consumes. Deletions are written to the offset store
 * under this broker's claim on the group, as offset expiry writes them, so they are durable in
 * both modes and refused once another coordinator claimed the group.
 */
export class GroupAdmin {
  readonly #options: GroupAdminOptions;

  constructor(options: GroupAdminOptions) {
    this.#options = options;
  }

  /**
   * Every group this broker coordinates with one of `states` (any if none; Kafka's names, any
   * case). loadFailed: the stored groups could not be read now; the listing has those held here.
   */
  async list(states: readonly string[] = []): Promise<{ groups: GroupListing[]; loadFailed: boolean }> {
    const { groups, offsets, coordinates } = this.#options;
    const wanted = new Set(states.map((state) => state.trim().toLowerCase()));
    const allowed = (state: GroupState) => wanted.size === 0 || wanted.has(state.toLowerCase());
    const listed: GroupListing[] = [];
    for (const groupId of groups.groupIds()) {
      const summary = groups.summary(groupId);
      if (summary !== null && coordinates(groupId) && allowed(summary.state)) listed.push({ groupId, protocolType: summary.protocolType, state: summary.state });
    }
    if (!allowed('Empty')) return { groups: listed, loadFailed: false }; // a group known only by its offsets is Empty: none to read
    try {
      const stored = (await offsets.groups()).filter((groupId) => coordinates(groupId) && groups.summary(groupId) === null);
      const found = await inBatches(stored, GROUP_READS_IN_FLIGHT_MAX, async (groupId) => ((await offsets.list(groupId)).length > 0 ? groupId : null));
      // judged again after the reads: a group that joined meanwhile is listed as held
      for (const groupId of found) if (groupId !== null && groups.summary(groupId) === null) listed.push({ groupId, protocolType: '', state: 'Empty' });
      return { groups: listed, loadFailed: false };
    } catch (error) {
      if (!isStorageFailure(error)) throw error;
      return { groups: listed, loadFailed: true };
    }
  }

  /** The group, Dead if it does not exist; NOT_COORDINATOR, or COORDINATOR_LOAD_IN_PROGRESS while its offsets cannot be read. */
  async describe(groupId: string): Promise<GroupDescription | number> {
    const { groups, coordinates } = this.#options;
    if (!coordinates(groupId)) return ErrorCode.NOT_COORDINATOR;
    const held = groups.summary(groupId);
    if (held !== null) return held;
    const stored = await this.#stored(groupId);
    if (typeof stored === 'number') return stored;
    const summary = groups.summary(groupId); // a join may have come in while the offsets were read
    if (summary !== null) return summary;
    return { state: stored.length > 0 ? 'Empty' : 'Dead', protocolType: '', protocolName: '', members: [] };
  }

  /**
   * Deletes an empty group and its offsets: NON_EMPTY_GROUP while it has members,
   * GROUP_ID_NOT_FOUND if it does not exist, NOT_COORDINATOR if another broker coordinates it.
   * Joins wait while it runs (a consumer joining then would fetch offsets that vanish under it).
   */
  async delete(groupId: string): Promise<number> {
    const { groups, coordinates } = this.#options;
    if (!coordinates(groupId)) return ErrorCode.NOT_COORDINATOR;
    if (groups.hasMembers(groupId)) return ErrorCode.NON_EMPTY_GROUP;
    const releaseJoins = groups.holdJoins(groupId);
    if (releaseJoins === null) return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS; // offset expiry is removing its offsets now: asked again, it finds them gone
    try {
      const stored = await this.#stored(groupId);
      if (typeof stored === 'number') return stored;
      if (stored.length === 0 && groups.status(groupId) === undefined) return ErrorCode.GROUP_ID_NOT_FOUND;
      const removed = await this.#removeUnderClaim(groupId, () => true);
      if (removed !== ErrorCode.NONE) return removed;
      groups.forget(groupId);
      this.#options.offsets.forget(groupId);
      return ErrorCode.NONE;
    } finally {
      releaseJoins();
    }
  }

  /**
   * Deletes the group's offsets of these partitions, as Kafka's OffsetDelete: GROUP_ID_NOT_FOUND
   * for a group that does not exist, NON_EMPTY_GROUP for one with members that are not
   * consumers (their subscriptions cannot be read); per partition GROUP_SUBSCRIBED_TO_TOPIC while
   * a live member subscribes to its topic (or a member's subscription cannot be read), else NONE
   * (offset or not).
   */
  async deleteOffsets(groupId: string, topics: readonly { readonly name: string; readonly partitions: readonly number[] }[]): Promise<OffsetDeleteResult> {
    const { groups, coordinates } = this.#options;
    const failed = (errorCode: number): OffsetDeleteResult => ({ errorCode, topics: [] });
    if (groupId === '') return failed(ErrorCode.INVALID_GROUP_ID);
    if (!coordinates(groupId)) return failed(ErrorCode.NOT_COORDINATOR);
    const stored = await this.#stored(groupId);
    if (typeof stored === 'number') return failed(stored);
    const protocols = groups.protocols(groupId);
    if (stored.length === 0 && protocols === null) return failed(ErrorCode.GROUP_ID_NOT_FOUND);
    const live = protocols?.members ?? [];
    if (live.length > 0 && protocols!.protocolType !== CONSUMER_PROTOCOL_TYPE) return failed(ErrorCode.NON_EMPTY_GROUP);
    const subscribed = subscriptionsOf(live);
    const consumed = (topic: string) => subscribed === null || subscribed.has(topic);
    const deleted = new Set(topics.filter((topic) => !consumed(topic.name)).flatMap((topic) => topic.partitions.map((partition) => partitionKey(topic.name, partition))));
    if (stored.some((offset) => deleted.has(partitionKey(offset.topic, offset.partition)))) {
      const removed = await this.#removeUnderClaim(groupId, (offset) => deleted.has(partitionKey(offset.topic, offset.partition)));
      if (removed !== ErrorCode.NONE) return failed(removed);
    }
    return {
      errorCode: ErrorCode.NONE,
      topics: topics.map((topic) => ({
        name: topic.name,
        partitions: topic.partitions.map((partitionIndex) => ({ partitionIndex, errorCode: consumed(topic.name) ? ErrorCode.GROUP_SUBSCRIBED_TO_TOPIC : ErrorCode.NONE })),
      })),
    };
  }

  /** The group's committed offsets; COORDINATOR_LOAD_IN_PROGRESS (retried by clients) while they cannot be read. */
  async #stored(groupId: string): Promise<GroupOffset[] | number> {
    try {
      return await this.#options.offsets.list(groupId);
    } catch (error) {
      if (!isStorageFailure(error)) throw error;
      return ErrorCode.COORDINATOR_LOAD_IN_PROGRESS;
    }
  }

  /**
   * Removes the offsets `chosen` picks, read again under this broker's claim on the group (taking
   * it, as a commit would): a commit of another coordinator that landed before the claim is
   * among them; a commit after the removal read is kept (it came after the delete). NOT_COORDINATOR
   * once another coordinator claimed the group (its state here is then dropped);
   * COORDINATOR_NOT_AVAILABLE when the store fails (clients retry it).
   */
  async #removeUnderClaim(groupId: string, chosen: (offset: GroupOffset) => boolean): Promise<number> {
    const { groups, offsets } = this.#options;
    let claim: Awaited<ReturnType<typeof offsets.claim>>;
    try {
      claim = await offsets.claim(groupId);
    } catch (error) {
      if (!isStorageFailure(error)) throw error;
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    }
    try {
      const due = (await offsets.list(groupId)).filter(chosen);
      if (due.length > 0) await offsets.remove(groupId, due, claim);
      return ErrorCode.NONE;
    } catch (error) {
      if (isFerryError(error, 'NotCoordinator')) {
        groups.drop(groupId, claim);
        return ErrorCode.NOT_COORDINATOR;
      }
      if (!isStorageFailure(error)) throw error;
      return ErrorCode.COORDINATOR_NOT_AVAILABLE;
    }
  }
}

/** Every topic any live member subscribes to in any protocol it offers; null if one's subscription cannot be read (then every topic counts, as Kafka's). */
function subscriptionsOf(members: readonly (readonly { readonly metadata: Uint8Array }[])[]): Set<string> | null {
  const topics = new Set<string>();
  for (const protocols of members) {
    for (const protocol of protocols) {
      const subscribed = subscribedTopics(protocol.metadata);
      if (subscribed === null) return null;
      for (const topic of subscribed) topics.add(topic);
    }
  }
  return topics;
}

/** A failure of the store or the machine (retried by clients as the coordinator not being ready), not of the request. */
function isStorageFailure(error: unknown): boolean {
  return isFerryError(error, 'Storage') || isStoreError(error) || isOsError(error);
}

function partitionKey(topic: string, partition: number): string {
  return `${topic}\u0000${partition}`;
}

/** `work` over every item, at most `width` at once, results in order. */
async function inBatches<T, R>(items: readonly T[], width: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  for (let at = 0; at < items.length; at += width) results.push(...(await Promise.all(items.slice(at, at + width).map(work))));
  return results;
}
