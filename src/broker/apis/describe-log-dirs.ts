import { type DescribeLogDirsRequest, describeLogDirsRequestSchema, type DescribeLogDirsResponse, describeLogDirsResponseSchema } from '../../protocol/messages/describe-log-dirs.ts';
import { schemaApi } from './api.ts';

export type * from '../../protocol/messages/describe-log-dirs.ts';

/** DescribeLogDirs (key 35). */
export const describeLogDirsCodec = schemaApi<DescribeLogDirsRequest, DescribeLogDirsResponse>({
  name: 'DescribeLogDirs',
  minVersion: 0,
  maxVersion: 4,
  request: describeLogDirsRequestSchema,
  response: describeLogDirsResponseSchema,
});
