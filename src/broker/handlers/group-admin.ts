// ListGroups, DescribeGroups, DeleteGroups and OffsetDelete over plain objects shaped like Kafka's
// request and response fields (camelCase), for the protocol layer to bind to its codecs.
import type { DeleteGroupsRequest, DeleteGroupsResponse } from '../apis/delete-groups.ts';
import type { DescribedGroup, DescribeGroupsRequest, DescribeGroupsResponse } from '../apis/describe-groups.ts';
import type { ListGroupsRequest, ListGroupsResponse } from '../apis/list-groups.ts';
import type { OffsetDeleteRequest, OffsetDeleteResponse } from '../apis/offset-delete.ts';
import type { BrokerContext } from '../context.ts';
import type { Session } from '../../security/session.ts';
import { LOCAL_SESSION } from './authorize.ts';
import { GroupAdmin } from '../groups/group-admin.ts';
import { ErrorCode } from '../protocol/error-codes.ts';

/** Every classic group is of this type (ListGroups v5, KIP-848's names). */
export const CLASSIC_GROUP_TYPE = 'classic';
/** "No authorized operations reported" (Kafka's -2^31 sentinel). */
export const AUTHORIZED_OPERATIONS_OMITTED = -2147483648;
/**
 * What a client may do with a group when no authorizer is configured, as Kafka reports it (KIP-430):
 * every operation a group supports, READ (3), DELETE (6) and DESCRIBE (8), as bits of the AclOperation codes.
 */
export const GROUP_OPERATIONS_ALL = (1 << 3) | (1 << 6) | (1 << 8);
/** From this DescribeGroups version on, a group that does not exist is GROUP_ID_NOT_FOUND (KIP-1043), not a Dead group without error. */
export const DESCRIBE_GROUPS_NOT_FOUND_VERSION = 6;


function groupAdmin(context: BrokerContext): GroupAdmin {
  return new GroupAdmin({ groups: context.groups, offsets: context.offsets, coordinates: (groupId) => context.topology.coordinatorFor(groupId)?.nodeId === context.nodeId });
}

/**
 * The groups this broker coordinates (clients ask every broker and merge the answers); groups
 * known only by committed offsets are Empty. COORDINATOR_LOAD_IN_PROGRESS while the stored groups
 * cannot be read, with the groups held in memory.
 */
export async function handleListGroups(context: BrokerContext, request: ListGroupsRequest, session: Session = LOCAL_SESSION): Promise<ListGroupsResponse> {
  const types = (request.typesFilter ?? []).map((type) => type.trim().toLowerCase());
  if (types.length > 0 && !types.includes(CLASSIC_GROUP_TYPE)) return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, groups: [] };
  const { groups, loadFailed } = await groupAdmin(context).list(request.statesFilter ?? []);
  return {
    throttleTimeMs: 0,
    errorCode: loadFailed ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : ErrorCode.NONE,
    groups: groups.map((group) => ({ groupId: group.groupId, protocolType: group.protocolType, groupState: group.state, groupType: CLASSIC_GROUP_TYPE })),
  };
}

/** Each group's state, protocol and members (metadata and assignments while Stable); `version` decides how a missing group is answered. */
export async function handleDescribeGroups(context: BrokerContext, request: DescribeGroupsRequest, version: number, session: Session = LOCAL_SESSION): Promise<DescribeGroupsResponse> {
  const admin = groupAdmin(context);
  const groups = await Promise.all(request.groups.map(async (groupId): Promise<DescribedGroup> => {
    const described = await admin.describe(groupId);
    const base = { errorMessage: null, groupId, groupState: '', protocolType: '', protocolData: '', members: [], authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED };
    if (typeof described === 'number') return { ...base, errorCode: described };
    if (described.state === 'Dead' && version >= DESCRIBE_GROUPS_NOT_FOUND_VERSION) return { ...base, errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${groupId} not found.`, groupState: 'Dead' };
    return {
      ...base,
      errorCode: ErrorCode.NONE,
      groupState: described.state,
      protocolType: described.protocolType,
      protocolData: described.protocolName,
      members: described.members.map((member) => ({ memberId: member.memberId, groupInstanceId: null, clientId: member.clientId, clientHost: member.clientHost, memberMetadata: member.metadata, memberAssignment: member.assignment })),
      authorizedOperations: request.includeAuthorizedOperations === true ? GROUP_OPERATIONS_ALL : AUTHORIZED_OPERATIONS_OMITTED,
    };
  }));
  return { throttleTimeMs: 0, groups };
}

/** Deletes empty groups and their offsets, one after another (each holds its group's joins while it runs). */
export async function handleDeleteGroups(context: BrokerContext, request: DeleteGroupsRequest, session: Session = LOCAL_SESSION): Promise<DeleteGroupsResponse> {
  const admin = groupAdmin(context);
  const results = [];
  for (const groupId of request.groupsNames) results.push({ groupId, errorCode: await admin.delete(groupId) });
  return { throttleTimeMs: 0, results };
}

/** Deletes a group's offsets of the partitions named, except of topics a live member subscribes to. */
export async function handleOffsetDelete(context: BrokerContext, request: OffsetDeleteRequest, session: Session = LOCAL_SESSION): Promise<OffsetDeleteResponse> {
  const result = await groupAdmin(context).deleteOffsets(request.groupId, request.topics.map((topic) => ({ name: topic.name, partitions: topic.partitions.map((p) => p.partitionIndex) })));
  return { errorCode: result.errorCode, throttleTimeMs: 0, topics: result.topics.map((topic) => ({ name: topic.name, partitions: topic.partitions.map((p) => ({ ...p })) })) };
}
