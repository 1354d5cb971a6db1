import type { ApiCodec } from './api.ts';
import { apiVersionsCodec } from './api-versions.ts';
import { createTopicsCodec } from './create-topics.ts';
import { deleteTopicsCodec } from './delete-topics.ts';
import { describeConfigsCodec } from './describe-configs.ts';
import { fetchCodec } from './fetch.ts';
import { findCoordinatorCodec } from './find-coordinator.ts';
import { heartbeatCodec } from './heartbeat.ts';
import { initProducerIdCodec } from './init-producer-id.ts';
import { joinGroupCodec } from './join-group.ts';
import { leaveGroupCodec } from './leave-group.ts';
import { listOffsetsCodec } from './list-offsets.ts';
import { metadataCodec } from './metadata.ts';
import { offsetCommitCodec } from './offset-commit.ts';
import { offsetFetchCodec } from './offset-fetch.ts';
import { offsetForLeaderEpochCodec } from './offset-for-leader-epoch.ts';
import { produceCodec } from './produce.ts';
import { syncGroupCodec } from './sync-group.ts';
import { describeProducersCodec } from './describe-producers.ts';
import { describeLogDirsCodec } from './describe-log-dirs.ts';
import { incrementalAlterConfigsCodec } from './incremental-alter-configs.ts';
import { alterConfigsCodec } from './alter-configs.ts';
import { deleteRecordsCodec } from './delete-records.ts';
import { createPartitionsCodec } from './create-partitions.ts';
import { describeClusterCodec } from './describe-cluster.ts';
import { offsetDeleteCodec } from './offset-delete.ts';
import { deleteGroupsCodec } from './delete-groups.ts';
import { describeGroupsCodec } from './describe-groups.ts';
import { listGroupsCodec } from './list-groups.ts';
import { describeAclsCodec } from './describe-acls.ts';
import { createAclsCodec } from './create-acls.ts';
import { deleteAclsCodec } from './delete-acls.ts';
import { saslHandshakeCodec } from './sasl-handshake.ts';
import { saslAuthenticateCodec } from './sasl-authenticate.ts';
import { describeClientQuotasCodec } from './describe-client-quotas.ts';
import { alterClientQuotasCodec } from './alter-client-quotas.ts';
import { describeUserScramCredentialsCodec } from './describe-user-scram-credentials.ts';
import { alterUserScramCredentialsCodec } from './alter-user-scram-credentials.ts';

/** Every API codec Ferry serves (the codec tests check each against Kafka's schemas). */
// biome-ignore lint: a table of codecs of different request and response types
export const API_CODECS: readonly ApiCodec<any, any>[] = [
  produceCodec,
  fetchCodec,
  listOffsetsCodec,
  metadataCodec,
  offsetCommitCodec,
  offsetFetchCodec,
  findCoordinatorCodec,
  joinGroupCodec,
  heartbeatCodec,
  leaveGroupCodec,
  syncGroupCodec,
  apiVersionsCodec,
  createTopicsCodec,
  deleteTopicsCodec,
  initProducerIdCodec,
  offsetForLeaderEpochCodec,
  describeConfigsCodec,
  listGroupsCodec,
  describeGroupsCodec,
  deleteGroupsCodec,
  offsetDeleteCodec,
  describeClusterCodec,
  createPartitionsCodec,
  deleteRecordsCodec,
  alterConfigsCodec,
  incrementalAlterConfigsCodec,
  describeLogDirsCodec,
  describeProducersCodec,
  describeAclsCodec,
  createAclsCodec,
  deleteAclsCodec,
  saslHandshakeCodec,
  saslAuthenticateCodec,
  describeClientQuotasCodec,
  alterClientQuotasCodec,
  describeUserScramCredentialsCodec,
  alterUserScramCredentialsCodec,
];
