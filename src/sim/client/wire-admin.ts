/**
 * The client side of the admin APIs the simulated clients use, each at a non-flexible version
 * (request header v1): CreateTopics v4, DeleteTopics v3, DeleteRecords v1, CreatePartitions v1,
 * IncrementalAlterConfigs v0, DescribeConfigs v3 and DescribeGroups v4.
 */
import { type CreatePartitionsRequest, createPartitionsRequestSchema, type CreatePartitionsResponse, createPartitionsResponseSchema } from '../../protocol/messages/create-partitions.ts';
import { type CreateTopicsRequest, createTopicsRequestSchema, type CreateTopicsResponse, createTopicsResponseSchema } from '../../protocol/messages/create-topics.ts';
import { type DescribeConfigsRequest, describeConfigsRequestSchema, type DescribeConfigsResponse, describeConfigsResponseSchema } from '../../protocol/messages/describe-configs.ts';
import { type DescribeGroupsRequest, describeGroupsRequestSchema, type DescribeGroupsResponse, describeGroupsResponseSchema } from '../../protocol/messages/describe-groups.ts';
import { type DeleteRecordsRequest, deleteRecordsRequestSchema, type DeleteRecordsResponse, deleteRecordsResponseSchema } from '../../protocol/messages/delete-records.ts';
import { type DeleteTopicsRequest, deleteTopicsRequestSchema, type DeleteTopicsResponse, deleteTopicsResponseSchema } from '../../protocol/messages/delete-topics.ts';
import {
  type IncrementalAlterConfigsRequest,
  incrementalAlterConfigsRequestSchema,
  type IncrementalAlterConfigsResponse,
  incrementalAlterConfigsResponseSchema,
} from '../../protocol/messages/incremental-alter-configs.ts';
import { schemaClientApi } from './api.ts';

export const createTopicsApi = schemaClientApi<CreateTopicsRequest, CreateTopicsResponse>('CreateTopics', 4, createTopicsRequestSchema, createTopicsResponseSchema);
export const deleteTopicsApi = schemaClientApi<DeleteTopicsRequest, DeleteTopicsResponse>('DeleteTopics', 3, deleteTopicsRequestSchema, deleteTopicsResponseSchema);
export const deleteRecordsApi = schemaClientApi<DeleteRecordsRequest, DeleteRecordsResponse>('DeleteRecords', 1, deleteRecordsRequestSchema, deleteRecordsResponseSchema);
export const createPartitionsApi = schemaClientApi<CreatePartitionsRequest, CreatePartitionsResponse>('CreatePartitions', 1, createPartitionsRequestSchema, createPartitionsResponseSchema);
export const incrementalAlterConfigsApi = schemaClientApi<IncrementalAlterConfigsRequest, IncrementalAlterConfigsResponse>(
  'IncrementalAlterConfigs',
  0,
  incrementalAlterConfigsRequestSchema,
  incrementalAlterConfigsResponseSchema,
);
export const describeConfigsApi = schemaClientApi<DescribeConfigsRequest, DescribeConfigsResponse>('DescribeConfigs', 3, describeConfigsRequestSchema, describeConfigsResponseSchema);
export const describeGroupsApi = schemaClientApi<DescribeGroupsRequest, DescribeGroupsResponse>('DescribeGroups', 4, describeGroupsRequestSchema, describeGroupsResponseSchema);
