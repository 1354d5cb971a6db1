// ListGroups, DescribeGroups, DeleteGroups and OffsetDelete over plain objects shaped like Kafka's
// request and response fields (camelCase), for the protocol layer to bind to its codecs.
import type { DeleteGroupsRequest, DeleteGroupsResponse } from '../apis/delete-groups.ts';
import type { DescribedGroup, DescribeGroupsRequest, DescribeGroupsResponse } from '../apis/describe-groups.ts';
import type { ListGroupsRequest, ListGroupsResponse } from '../apis/list-groups.ts';
import type { OffsetDeleteRequest, OffsetDeleteResponse } from '../apis/offset-delete.ts';
import type { BrokerContext } from '../context.ts';
import type { Session } from '../../security/session.ts';
import { allowed, allowedNames, allowedOnCluster, AUTHORIZED_OPERATIONS_OMITTED, authorizedOperations, LOCAL_SESSION, operationBits } from './authorize.ts';
import { AclOperation, ResourceType } from '../../security/acl/model.ts';
import { GroupAdmin } from '../groups/group-admin.ts';
import { ErrorCode } from '../../protocol/error-codes.ts';

/** Every classic group is of this type (ListGroups v5, KIP-848's names). */
export const CLASSIC_GROUP_TYPE = 'classic';
export { AUTHORIZED_OPERATIONS_OMITTED };
/**
 * What a client may do with a group when no authorizer is configured, as Kafka 4.1 reports it
 * (KIP-430): every operation a group supports, READ, DESCRIBE, DELETE, DESCRIBE_CONFIGS and
 * ALTER_CONFIGS (group configs, KIP-848), as bits of the AclOperation codes.
 */
export const GROUP_OPERATIONS_ALL = operationBits([AclOperation.READ, AclOperation.DESCRIBE, AclOperation.DELETE, AclOperation.DESCRIBE_CONFIGS, AclOperation.ALTER_CONFIGS]);
/** From this DescribeGroups version on, a group that does not exist is GROUP_ID_NOT_FOUND (KIP-1043), not a Dead group without error. */
export const DESCRIBE_GROUPS_NOT_FOUND_VERSION = 6;

function groupAdmin(context: BrokerContext): GroupAdmin {
  return new GroupAdmin({ groups: context.groups, offsets: context.offsets, coordinates: (groupId) => context.topology.coordinatorFor(groupId)?.nodeId === context.nodeId });
}

/**
 * The groups this broker coordinates (clients ask every broker and merge the answers); groups
 * known only by committed offsets are Empty. COORDINATOR_LOAD_IN_PROGRESS while the stored groups
 * cannot be read, with the groups held in memory. As Kafka's KafkaApis.handleListGroupsRequest:
 * DESCRIBE on the cluster lists them all; without it, only those the client may DESCRIBE (no
 * denial logged: the client named none).
 */
export async function handleListGroups(context: BrokerContext, request: ListGroupsRequest, session: Session = LOCAL_SESSION): Promise<ListGroupsResponse> {
  const quiet = { logIfDenied: false };
  const describesCluster = allowedOnCluster(context, session, AclOperation.DESCRIBE, quiet);
  const types = (request.typesFilter ?? []).map((type) => type.trim().toLowerCase());
  if (types.length > 0 && !types.includes(CLASSIC_GROUP_TYPE)) return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, groups: [] };
  const listed = await groupAdmin(context).list(request.statesFilter ?? []);
  const groups = describesCluster ? listed.groups : listed.groups.filter((group) => allowed(context, session, AclOperation.DESCRIBE, ResourceType.GROUP, group.groupId, quiet));
  return {
    throttleTimeMs: 0,
    errorCode: listed.loadFailed ? ErrorCode.COORDINATOR_LOAD_IN_PROGRESS : ErrorCode.NONE,
    groups: groups.map((group) => ({ groupId: group.groupId, protocolType: group.protocolType, groupState: group.state, groupType: CLASSIC_GROUP_TYPE })),
  };
}

/**
 * Each group's state, protocol and members (metadata and assignments while Stable); `version`
 * decides how a missing group is answered. As Kafka's KafkaApis.handleDescribeGroupsRequest: each
 * group needs DESCRIBE (GROUP_AUTHORIZATION_FAILED); the authorized operations, when asked for
 * (v3+), are the session's on the group.
 */
export async function handleDescribeGroups(context: BrokerContext, request: DescribeGroupsRequest, version: number, session: Session = LOCAL_SESSION): Promise<DescribeGroupsResponse> {
  const admin = groupAdmin(context);
  const groups = await Promise.all(
    request.groups.map(async (groupId): Promise<DescribedGroup> => {
      const base = { errorMessage: null, groupId, groupState: '', protocolType: '', protocolData: '', members: [], authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED };
      if (!allowed(context, session, AclOperation.DESCRIBE, ResourceType.GROUP, groupId)) return { ...base, errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED };
      const described = await admin.describe(groupId);
      if (typeof described === 'number') return { ...base, errorCode: described };
      if (described.state === 'Dead' && version >= DESCRIBE_GROUPS_NOT_FOUND_VERSION)
        return { ...base, errorCode: ErrorCode.GROUP_ID_NOT_FOUND, errorMessage: `Group ${groupId} not found.`, groupState: 'Dead' };
      return {
        ...base,
        errorCode: ErrorCode.NONE,
        groupState: described.state,
        protocolType: described.protocolType,
        protocolData: described.protocolName,
        members: described.members.map((member) => ({
          memberId: member.memberId,
          groupInstanceId: null,
          clientId: member.clientId,
          clientHost: member.clientHost,
          memberMetadata: member.metadata,
          memberAssignment: member.assignment,
        })),
        authorizedOperations: request.includeAuthorizedOperations === true ? authorizedOperations(context, session, ResourceType.GROUP, groupId) : AUTHORIZED_OPERATIONS_OMITTED,
      };
    }),
  );
  return { throttleTimeMs: 0, groups };
}

/**
 * Deletes empty groups and their offsets, one after another (each holds its group's joins while
 * it runs). Each group needs DELETE (else GROUP_AUTHORIZATION_FAILED), as in Kafka.
 */
export async function handleDeleteGroups(context: BrokerContext, request: DeleteGroupsRequest, session: Session = LOCAL_SESSION): Promise<DeleteGroupsResponse> {
  const admin = groupAdmin(context);
  const deletable = allowedNames(context, session, AclOperation.DELETE, ResourceType.GROUP, request.groupsNames);
  const results = [];
  for (const groupId of request.groupsNames) results.push({ groupId, errorCode: deletable.has(groupId) ? await admin.delete(groupId) : ErrorCode.GROUP_AUTHORIZATION_FAILED });
  return { throttleTimeMs: 0, results };
}

/**
 * Deletes a group's offsets of the partitions named, except of topics a live member subscribes
 * to. As Kafka's KafkaApis.handleOffsetDeleteRequest: DELETE on the group (else a top-level
 * GROUP_AUTHORIZATION_FAILED), then READ on each topic (else TOPIC_AUTHORIZATION_FAILED for its
 * partitions, whose offsets stay); a top-level error of the coordinator replaces every answer.
 */
export async function handleOffsetDelete(context: BrokerContext, request: OffsetDeleteRequest, session: Session = LOCAL_SESSION): Promise<OffsetDeleteResponse> {
  if (!allowed(context, session, AclOperation.DELETE, ResourceType.GROUP, request.groupId)) return { errorCode: ErrorCode.GROUP_AUTHORIZATION_FAILED, throttleTimeMs: 0, topics: [] };
  const readable = allowedNames(
    context,
    session,
    AclOperation.READ,
    ResourceType.TOPIC,
    request.topics.map((topic) => topic.name),
  );
  const authorized = request.topics.filter((topic) => readable.has(topic.name));
  const result = await groupAdmin(context).deleteOffsets(
    request.groupId,
    authorized.map((topic) => ({ name: topic.name, partitions: topic.partitions.map((p) => p.partitionIndex) })),
  );
  if (result.errorCode !== ErrorCode.NONE) return { errorCode: result.errorCode, throttleTimeMs: 0, topics: [] };
  const answered = [...result.topics];
  const topics = request.topics.map((topic) => {
    if (!readable.has(topic.name)) return { name: topic.name, partitions: topic.partitions.map((p) => ({ partitionIndex: p.partitionIndex, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED })) };
    const result = answered.shift()!; // deleteOffsets answers each topic it was given, in order
    return { name: result.name, partitions: result.partitions.map((p) => ({ ...p })) };
  });
  return { errorCode: ErrorCode.NONE, throttleTimeMs: 0, topics };
}
