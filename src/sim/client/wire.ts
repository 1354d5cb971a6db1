/** Every API the simulated clients speak, client side (one file per group of APIs). */
export { type ClientApi, errorName, writeRequestHeader } from './api.ts';
export { createPartitionsApi, createTopicsApi, deleteRecordsApi, deleteTopicsApi, describeConfigsApi, describeGroupsApi, incrementalAlterConfigsApi } from './wire-admin.ts';
export { fetchApi, initProducerIdApi, listOffsetsApi, metadataApi, produceApi } from './wire-data.ts';
export { findCoordinatorApi, heartbeatApi, joinGroupApi, leaveGroupApi, offsetCommitApi, offsetFetchApi, syncGroupApi } from './wire-group.ts';
export {
  alterClientQuotasApi,
  alterUserScramCredentialsApi,
  apiVersionsApi,
  createAclsApi,
  deleteAclsApi,
  describeAclsApi,
  describeClientQuotasApi,
  saslAuthenticateApi,
  saslHandshakeApi,
  saslHandshakeV0Api,
} from './wire-security.ts';
