/** The client side of the admin APIs the simulated clients use: CreateTopics v4 and DeleteTopics v3. */
import { type CreateTopicsRequest, createTopicsRequestSchema, type CreateTopicsResponse, createTopicsResponseSchema } from '../../broker/protocol/messages/create-topics.ts';
import { type DeleteTopicsRequest, deleteTopicsRequestSchema, type DeleteTopicsResponse, deleteTopicsResponseSchema } from '../../broker/protocol/messages/delete-topics.ts';
import { schemaClientApi } from './api.ts';

export const createTopicsApi = schemaClientApi<CreateTopicsRequest, CreateTopicsResponse>('CreateTopics', 4, createTopicsRequestSchema, createTopicsResponseSchema);
export const deleteTopicsApi = schemaClientApi<DeleteTopicsRequest, DeleteTopicsResponse>('DeleteTopics', 3, deleteTopicsRequestSchema, deleteTopicsResponseSchema);
