// Review finding (issue 14): ferry_broker_request_errors_total counts errorCode fields down to
// ERROR_CODE_DEPTH_MAX = 4 (src/broker/request-metrics.ts), whose comment says Fetch's partitions
// sit deepest. OffsetFetch v8+ (several groups per request) puts partition codes at
// response.groups[].topics[].partitions[].errorCode, depth 6: a consumer refused per partition
// (TOPIC_AUTHORIZATION_FAILED, TOPIC_AUTHORIZATION_FAILED) is never counted.
import { expect, test } from 'bun:test';
import { countErrorCodes } from '../../src/broker/request-metrics.ts';
import { ErrorCode } from '../../src/protocol/error-codes.ts';
import type { OffsetFetchResponse } from '../../src/protocol/messages/offset-fetch.ts';

test('an OffsetFetch v8 partition error code is counted', () => {
  const response: OffsetFetchResponse = {
    throttleTimeMs: 0,
    groups: [
      {
        groupId: 'g',
        errorCode: 0,
        topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: -1, committedLeaderEpoch: -1, metadata: null, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED }] }],
      },
    ],
  };
  const counts = new Map<number, number>();
  countErrorCodes(response, counts);
  expect(counts.get(ErrorCode.TOPIC_AUTHORIZATION_FAILED)).toBe(1);
});

test('control: the same code at OffsetFetch v7 depth is counted', () => {
  const counts = new Map<number, number>();
  countErrorCodes({ topics: [{ name: 't', partitions: [{ partitionIndex: 0, committedOffset: -1, metadata: null, errorCode: ErrorCode.TOPIC_AUTHORIZATION_FAILED }] }] }, counts);
  expect(counts.get(ErrorCode.TOPIC_AUTHORIZATION_FAILED)).toBe(1);
});
