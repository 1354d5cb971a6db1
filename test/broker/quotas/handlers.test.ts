// DescribeClientQuotas and AlterClientQuotas handlers: Kafka's authorization (DESCRIBE_CONFIGS and
// ALTER_CONFIGS on the cluster) and answers; the store's own checks are in test/security/quotas.
import { describe, expect, test } from 'bun:test';
import type { AlterClientQuotasRequest } from '../../../src/broker/apis/alter-client-quotas.ts';
import type { DescribeClientQuotasRequest } from '../../../src/broker/apis/describe-client-quotas.ts';
import { CLUSTER_AUTHORIZATION_FAILED_MESSAGE, handleAlterClientQuotas, handleDescribeClientQuotas, type QuotaContext, QUOTAS_UNAVAILABLE_MESSAGE } from '../../../src/broker/handlers/quotas.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { ControlStore } from '../../../src/control/control-store.ts';
import { AclStore } from '../../../src/security/acl/acl-store.ts';
import { Authorizer } from '../../../src/security/acl/authorizer.ts';
import { type AclBinding, AclOperation, AclPermissionType, CLUSTER_NAME, PatternType, ResourceType } from '../../../src/security/acl/model.ts';
import { ClientQuotaStore } from '../../../src/security/quotas/store.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { session } from '../../security/acl/helpers.ts';

const admin = session('User:admin');
const alice = session('User:alice');

const alterRequest = (validateOnly = false): AlterClientQuotasRequest => ({
  validateOnly,
  entries: [
    {
      entity: [
        { entityType: 'user', entityName: 'bob' },
        { entityType: 'user', entityName: 'carol' },
      ],
      ops: [{ key: 'producer_byte_rate', value: 1024, remove: false }],
    },
    { entity: [{ entityType: 'client-id', entityName: null }], ops: [{ key: 'request_percentage', value: 25, remove: false }] },
  ],
});
const describeAll: DescribeClientQuotasRequest = { components: [], strict: false };

async function broker(withAuthorizer: boolean) {
  const memory = new MemoryStore();
  const quotas = new ClientQuotaStore(new ControlStore(memory, 'cluster'));
  const acls = withAuthorizer ? new AclStore(new ControlStore(memory, 'cluster'), new Authorizer({ superUsers: ['User:admin'] })) : null;
  await acls?.refresh();
  const context = { security: { authorizer: acls?.authorizer ?? null, acls, quotas } } as unknown as QuotaContext;
  return { quotas, acls, context };
}

describe('authorization', () => {
  test('without an authorizer anyone describes and alters', async () => {
    const { context } = await broker(false);
    const altered = await handleAlterClientQuotas(context, alterRequest(), alice);
    expect(altered).toEqual({
      throttleTimeMs: 0,
      entries: [
        { errorCode: 0, errorMessage: null, entity: [{ entityType: 'user', entityName: 'carol' }] },
        { errorCode: 0, errorMessage: null, entity: [{ entityType: 'client-id', entityName: null }] },
      ],
    });
    expect(handleDescribeClientQuotas(context, describeAll, alice)).toEqual({
      throttleTimeMs: 0,
      errorCode: 0,
      errorMessage: null,
      entries: [
        { entity: [{ entityType: 'client-id', entityName: null }], values: [{ key: 'request_percentage', value: 25 }] },
        { entity: [{ entityType: 'user', entityName: 'carol' }], values: [{ key: 'producer_byte_rate', value: 1024 }] },
      ],
    });
  });

  test('without ALTER_CONFIGS on the cluster every entry, as sent, is CLUSTER_AUTHORIZATION_FAILED and nothing changes; without DESCRIBE_CONFIGS no entries', async () => {
    const { context, quotas } = await broker(true);
    const altered = await handleAlterClientQuotas(context, alterRequest(), alice);
    expect(altered.entries).toEqual(
      alterRequest().entries.map((entry) => ({ errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED, errorMessage: CLUSTER_AUTHORIZATION_FAILED_MESSAGE, entity: entry.entity })),
    );
    expect(quotas.describe([], false).entries).toEqual([]);
    expect(handleDescribeClientQuotas(context, describeAll, alice)).toEqual({
      throttleTimeMs: 0,
      errorCode: ErrorCode.CLUSTER_AUTHORIZATION_FAILED,
      errorMessage: 'Cluster authorization failed.',
      entries: null,
    });
  });

  test('a super user, or a user granted ALTER_CONFIGS and DESCRIBE_CONFIGS on the cluster, may', async () => {
    const { context, acls } = await broker(true);
    expect((await handleAlterClientQuotas(context, alterRequest(true), admin)).entries.map((e) => e.errorCode)).toEqual([0, 0]);
    const grant = (operation: AclOperation): AclBinding => ({
      pattern: { resourceType: ResourceType.CLUSTER, name: CLUSTER_NAME, patternType: PatternType.LITERAL },
      entry: { principal: 'User:alice', host: '*', operation, permissionType: AclPermissionType.ALLOW },
    });
    await acls!.create([grant(AclOperation.ALTER_CONFIGS), grant(AclOperation.DESCRIBE_CONFIGS)]);
    expect((await handleAlterClientQuotas(context, alterRequest(), alice)).entries.map((e) => e.errorCode)).toEqual([0, 0]);
    expect(handleDescribeClientQuotas(context, describeAll, alice).entries).toHaveLength(2);
  });
});

test('a broker that holds no quota store answers UNKNOWN_SERVER_ERROR', async () => {
  const context = { security: { authorizer: null } } as unknown as QuotaContext;
  expect(handleDescribeClientQuotas(context, describeAll)).toEqual({ throttleTimeMs: 0, errorCode: ErrorCode.UNKNOWN_SERVER_ERROR, errorMessage: QUOTAS_UNAVAILABLE_MESSAGE, entries: null });
  expect((await handleAlterClientQuotas(context, alterRequest())).entries.map((e) => e.errorCode)).toEqual([ErrorCode.UNKNOWN_SERVER_ERROR, ErrorCode.UNKNOWN_SERVER_ERROR]);
});
