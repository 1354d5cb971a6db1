import { alterClientQuotasCodec } from './apis/alter-client-quotas.ts';
import { alterConfigsCodec } from './apis/alter-configs.ts';
import { alterUserScramCredentialsCodec } from './apis/alter-user-scram-credentials.ts';
import { apiVersionsCodec } from './apis/api-versions.ts';
import { createAclsCodec } from './apis/create-acls.ts';
import { createPartitionsCodec } from './apis/create-partitions.ts';
import { createTopicsCodec } from './apis/create-topics.ts';
import { deleteAclsCodec } from './apis/delete-acls.ts';
import { deleteGroupsCodec } from './apis/delete-groups.ts';
import { deleteRecordsCodec } from './apis/delete-records.ts';
import { deleteTopicsCodec } from './apis/delete-topics.ts';
import { describeAclsCodec } from './apis/describe-acls.ts';
import { describeClientQuotasCodec } from './apis/describe-client-quotas.ts';
import { describeClusterCodec } from './apis/describe-cluster.ts';
import { describeConfigsCodec } from './apis/describe-configs.ts';
import { describeGroupsCodec } from './apis/describe-groups.ts';
import { describeLogDirsCodec } from './apis/describe-log-dirs.ts';
import { describeProducersCodec } from './apis/describe-producers.ts';
import { describeUserScramCredentialsCodec } from './apis/describe-user-scram-credentials.ts';
import { fetchCodec } from './apis/fetch.ts';
import { findCoordinatorCodec } from './apis/find-coordinator.ts';
import { heartbeatCodec } from './apis/heartbeat.ts';
import { incrementalAlterConfigsCodec } from './apis/incremental-alter-configs.ts';
import { initProducerIdCodec } from './apis/init-producer-id.ts';
import { joinGroupCodec } from './apis/join-group.ts';
import { leaveGroupCodec } from './apis/leave-group.ts';
import { listGroupsCodec } from './apis/list-groups.ts';
import { listOffsetsCodec } from './apis/list-offsets.ts';
import { metadataCodec } from './apis/metadata.ts';
import { offsetCommitCodec } from './apis/offset-commit.ts';
import { offsetDeleteCodec } from './apis/offset-delete.ts';
import { offsetFetchCodec } from './apis/offset-fetch.ts';
import { offsetForLeaderEpochCodec } from './apis/offset-for-leader-epoch.ts';
import { produceCodec } from './apis/produce.ts';
import { saslAuthenticateCodec } from './apis/sasl-authenticate.ts';
import { saslHandshakeCodec } from './apis/sasl-handshake.ts';
import { syncGroupCodec } from './apis/sync-group.ts';
import type { BrokerContext } from './context.ts';
import { handleCreateAclsWith, handleDeleteAclsWith, handleDescribeAclsWith } from './handlers/acls.ts';
import { handleDescribeCluster } from './handlers/cluster.ts';
import { handleAlterConfigs, handleDescribeConfigs, handleIncrementalAlterConfigs } from './handlers/configs.ts';
import { handleFindCoordinator, handleInitProducerId } from './handlers/coordinator.ts';
import { handleFetch, refuseOldFetch } from './handlers/fetch.ts';
import { handleDeleteGroups, handleDescribeGroups, handleListGroups, handleOffsetDelete } from './handlers/group-admin.ts';
import { handleHeartbeat, handleJoinGroup, handleLeaveGroup, handleOffsetCommit, handleOffsetFetch, handleSyncGroup } from './handlers/groups.ts';
import { handleListOffsets } from './handlers/list-offsets.ts';
import { handleMetadata } from './handlers/metadata.ts';
import { handleOffsetForLeaderEpoch } from './handlers/offset-for-leader-epoch.ts';
import { handleCreatePartitions, handleDeleteRecords, handleDescribeLogDirs, handleDescribeProducers } from './handlers/partition-admin.ts';
import { handleProduce, refuseOldProduce } from './handlers/produce.ts';
import { handleAlterClientQuotas, handleDescribeClientQuotas } from './handlers/quotas.ts';
import { handleAlterUserScramCredentials, handleDescribeUserScramCredentials } from './handlers/scram-users.ts';
import { handleCreateTopics, handleDeleteTopics } from './handlers/topics.ts';
import { type ApiBinding, Router } from './router.ts';

// biome-ignore lint: a table of bindings of different request and response types
type AnyBinding = ApiBinding<any, any>;

/**
 * What the broker does for each API: the handler, given the broker's context and the request's
 * (its header and the connection's session: who asks, through which listener).
 */
export function apiBindings(context: () => BrokerContext): AnyBinding[] {
  let router: Router | undefined;
  const table: AnyBinding[] = [
    { codec: apiVersionsCodec, handle: () => ({ errorCode: 0, apiKeys: router!.apiVersions(), throttleTimeMs: 0 }) },
    { codec: saslHandshakeCodec, handle: (request, { header, sasl }) => sasl.handshake(request, header.apiVersion) },
    { codec: saslAuthenticateCodec, handle: (request, { header, sasl }) => sasl.authenticate(request, header.apiVersion) },
    { codec: metadataCodec, handle: (request, rc) => handleMetadata(context(), request, rc.header.apiVersion, rc.session) },
    { codec: produceCodec, handle: (request, rc) => handleProduce(context(), request, rc.session), refuseVersion: refuseOldProduce },
    { codec: fetchCodec, handle: (request, rc) => handleFetch(context(), request, rc.session, rc.responseBuffers?.allocate), refuseVersion: refuseOldFetch },
    { codec: listOffsetsCodec, handle: (request, rc) => handleListOffsets(context(), request, rc.session) },
    { codec: initProducerIdCodec, handle: (request, rc) => handleInitProducerId(context(), request, rc.session) },
    { codec: findCoordinatorCodec, handle: (request, rc) => handleFindCoordinator(context(), request, rc.session) },
    { codec: joinGroupCodec, handle: (request, rc) => handleJoinGroup(context(), request, rc.header.clientId ?? '', `/${rc.peer}`, rc.session) },
    { codec: syncGroupCodec, handle: (request, rc) => handleSyncGroup(context(), request, rc.session) },
    { codec: heartbeatCodec, handle: (request, rc) => handleHeartbeat(context(), request, rc.session) },
    { codec: leaveGroupCodec, handle: (request, rc) => handleLeaveGroup(context(), request, rc.session) },
    { codec: offsetCommitCodec, handle: (request, rc) => handleOffsetCommit(context(), request, rc.session) },
    { codec: offsetFetchCodec, handle: (request, rc) => handleOffsetFetch(context(), request, rc.session) },
    { codec: createTopicsCodec, handle: (request, rc) => handleCreateTopics(context(), request, rc.session) },
    { codec: deleteTopicsCodec, handle: (request, rc) => handleDeleteTopics(context(), request, rc.session) },
    { codec: describeConfigsCodec, handle: (request, rc) => handleDescribeConfigs(context(), request, rc.session) },
    { codec: offsetForLeaderEpochCodec, handle: (request, rc) => handleOffsetForLeaderEpoch(context(), request, rc.session) },
    { codec: listGroupsCodec, handle: (request, rc) => handleListGroups(context(), request, rc.session) },
    { codec: describeGroupsCodec, handle: (request, rc) => handleDescribeGroups(context(), request, rc.header.apiVersion, rc.session) },
    { codec: deleteGroupsCodec, handle: (request, rc) => handleDeleteGroups(context(), request, rc.session) },
    { codec: offsetDeleteCodec, handle: (request, rc) => handleOffsetDelete(context(), request, rc.session) },
    { codec: describeClusterCodec, handle: (request, rc) => handleDescribeCluster(context(), request, rc.session) },
    { codec: alterConfigsCodec, handle: (request, rc) => handleAlterConfigs(context(), request, rc.session) },
    { codec: incrementalAlterConfigsCodec, handle: (request, rc) => handleIncrementalAlterConfigs(context(), request, rc.session) },
    { codec: createPartitionsCodec, handle: (request, rc) => handleCreatePartitions(context(), request, rc.session) },
    { codec: deleteRecordsCodec, handle: (request, rc) => handleDeleteRecords(context(), request, rc.session) },
    { codec: describeProducersCodec, handle: (request, rc) => handleDescribeProducers(context(), request, rc.session) },
    { codec: describeLogDirsCodec, handle: (request, rc) => handleDescribeLogDirs(context(), request, rc.session) },
    { codec: describeAclsCodec, handle: (request, rc) => handleDescribeAclsWith(context().security.acls, rc.session, request) },
    { codec: createAclsCodec, handle: (request, rc) => handleCreateAclsWith(context().security.acls, rc.session, request) },
    { codec: deleteAclsCodec, handle: (request, rc) => handleDeleteAclsWith(context().security.acls, rc.session, request) },
    { codec: describeUserScramCredentialsCodec, handle: (request, rc) => handleDescribeUserScramCredentials(context(), request, rc.session) },
    { codec: alterUserScramCredentialsCodec, handle: (request, rc) => handleAlterUserScramCredentials(context(), request, rc.session) },
    { codec: describeClientQuotasCodec, handle: (request, rc) => handleDescribeClientQuotas(context(), request, rc.session) },
    { codec: alterClientQuotasCodec, handle: (request, rc) => handleAlterClientQuotas(context(), request, rc.session) },
  ];
  router = new Router(table);
  return table;
}
