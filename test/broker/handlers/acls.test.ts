import { describe, expect, test } from 'bun:test';
import { createAclsCodec } from '../../../src/broker/apis/create-acls.ts';
import { deleteAclsCodec } from '../../../src/broker/apis/delete-acls.ts';
import { describeAclsCodec } from '../../../src/broker/apis/describe-acls.ts';
import {
  ALTER_ACLS_DISABLED_MESSAGE,
  CLUSTER_NAME_MESSAGE,
  DESCRIBE_ACLS_DISABLED_MESSAGE,
  DESCRIBE_ACLS_UNKNOWN_MESSAGE,
  EMPTY_NAME_MESSAGE,
  handleCreateAclsWith,
  handleDeleteAclsWith,
  handleDescribeAclsWith,
} from '../../../src/broker/handlers/acls.ts';
import { ErrorCode } from '../../../src/protocol/error-codes.ts';
import { completeMessage, type Draft } from '../../../src/protocol/message-codec.ts';
import { type AclCreation, type CreateAclsRequest, createAclsRequestSchema } from '../../../src/protocol/messages/create-acls.ts';
import { type DeleteAclsFilter, type DeleteAclsRequest, deleteAclsRequestSchema } from '../../../src/protocol/messages/delete-acls.ts';
import { type DescribeAclsRequest, describeAclsRequestSchema } from '../../../src/protocol/messages/describe-acls.ts';
import { KafkaWriter } from '../../../src/protocol/writer.ts';
import { ControlStore } from '../../../src/control/control-store.ts';
import { AclStore, type AclService } from '../../../src/security/acl/acl-store.ts';
import { Authorizer } from '../../../src/security/acl/authorizer.ts';
import { AclOperation, AclPermissionType, CLUSTER_NAME, PatternType, ResourceType } from '../../../src/security/acl/model.ts';
import { MemoryStore } from '../../../src/store/memory.ts';
import { session } from '../../security/acl/helpers.ts';

const admin = session('User:admin');
const alice = session('User:alice', '10.0.0.1');
const { TOPIC, GROUP, CLUSTER } = ResourceType;
const { LITERAL, PREFIXED } = PatternType;
const { ALLOW, DENY } = AclPermissionType;

const creation = (draft: Partial<AclCreation> = {}): AclCreation => ({
  resourceType: TOPIC,
  resourceName: 'orders',
  resourcePatternType: LITERAL,
  principal: 'User:alice',
  host: '*',
  operation: AclOperation.READ,
  permissionType: ALLOW,
  ...draft,
});
const filter = (draft: Partial<DeleteAclsFilter> = {}): DeleteAclsFilter => ({
  resourceTypeFilter: ResourceType.ANY,
  resourceNameFilter: null,
  patternTypeFilter: PatternType.ANY,
  principalFilter: null,
  hostFilter: null,
  operation: AclOperation.ANY,
  permissionType: AclPermissionType.ANY,
  ...draft,
});
const createRequest = (creations: AclCreation[]): CreateAclsRequest => completeMessage<CreateAclsRequest>(createAclsRequestSchema, { creations } as Draft<CreateAclsRequest>);
const deleteRequest = (filters: DeleteAclsFilter[]): DeleteAclsRequest => completeMessage<DeleteAclsRequest>(deleteAclsRequestSchema, { filters } as Draft<DeleteAclsRequest>);
const describeRequest = (draft: Partial<DeleteAclsFilter> = {}): DescribeAclsRequest => completeMessage<DescribeAclsRequest>(describeAclsRequestSchema, filter(draft) as Draft<DescribeAclsRequest>);

async function service(): Promise<AclStore> {
  const acls = new AclStore(new ControlStore(new MemoryStore(), 'cluster'), new Authorizer({ superUsers: ['User:admin'] }));
  await acls.refresh();
  return acls;
}

describe('without an authorizer', () => {
  test("every ACL request answers SECURITY_DISABLED with Kafka's words, as before", async () => {
    const described = handleDescribeAclsWith(null, admin, describeRequest());
    expect([described.errorCode, described.errorMessage, described.resources]).toEqual([ErrorCode.SECURITY_DISABLED, DESCRIBE_ACLS_DISABLED_MESSAGE, []]);
    const created = await handleCreateAclsWith(null, admin, createRequest([creation(), creation()]));
    expect(created.results).toEqual([0, 1].map(() => ({ errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: ALTER_ACLS_DISABLED_MESSAGE })));
    const deleted = await handleDeleteAclsWith(null, admin, deleteRequest([filter()]));
    expect(deleted.filterResults).toEqual([{ errorCode: ErrorCode.SECURITY_DISABLED, errorMessage: ALTER_ACLS_DISABLED_MESSAGE, matchingAcls: [] }]);
  });
});

describe('authorization of the ACL APIs', () => {
  test('CLUSTER_AUTHORIZATION_FAILED for every item without ALTER (create, delete) or DESCRIBE (describe) on the cluster', async () => {
    const acls = await service();
    const created = await handleCreateAclsWith(acls, alice, createRequest([creation(), creation({ resourceName: 'other' })]));
    expect(created.results.map((r) => r.errorCode)).toEqual([ErrorCode.CLUSTER_AUTHORIZATION_FAILED, ErrorCode.CLUSTER_AUTHORIZATION_FAILED]);
    expect(created.results[0]!.errorMessage).toBe('Request CreateAcls from User:alice at 10.0.0.1 is not authorized.');
    const deleted = await handleDeleteAclsWith(acls, alice, deleteRequest([filter()]));
    expect(deleted.filterResults.map((r) => [r.errorCode, r.matchingAcls])).toEqual([[ErrorCode.CLUSTER_AUTHORIZATION_FAILED, []]]);
    const described = handleDescribeAclsWith(acls, alice, describeRequest());
    expect([described.errorCode, described.resources]).toEqual([ErrorCode.CLUSTER_AUTHORIZATION_FAILED, []]);
    expect(
      acls.acls({
        pattern: { resourceType: ResourceType.ANY, name: null, patternType: PatternType.ANY },
        entry: { principal: null, host: null, operation: AclOperation.ANY, permissionType: AclPermissionType.ANY },
      }),
    ).toEqual([]);
  });

  test('ALTER on the cluster lets a user change ACLs, and implies DESCRIBE to list them', async () => {
    const acls = await service();
    const grant = await handleCreateAclsWith(acls, admin, createRequest([creation({ resourceType: CLUSTER, resourceName: CLUSTER_NAME, operation: AclOperation.ALTER })]));
    expect(grant.results).toEqual([{ errorCode: ErrorCode.NONE, errorMessage: null }]);
    expect((await handleCreateAclsWith(acls, alice, createRequest([creation()]))).results).toEqual([{ errorCode: ErrorCode.NONE, errorMessage: null }]);
    expect(handleDescribeAclsWith(acls, alice, describeRequest()).resources).toHaveLength(2);
  });
});

describe('CreateAcls validation', () => {
  test("Kafka's errors one by one, in the request's order, the valid creations made", async () => {
    const acls = await service();
    const cases: [Partial<AclCreation>, number, string | null][] = [
      [{}, ErrorCode.NONE, null],
      [{ resourceType: CLUSTER, resourceName: 'my-cluster' }, ErrorCode.INVALID_REQUEST, CLUSTER_NAME_MESSAGE],
      [{ resourceType: CLUSTER, resourceName: 'kafka', resourcePatternType: PREFIXED }, ErrorCode.INVALID_REQUEST, CLUSTER_NAME_MESSAGE],
      [{ resourceType: CLUSTER, resourceName: CLUSTER_NAME, resourcePatternType: PREFIXED, operation: AclOperation.ALTER }, ErrorCode.NONE, null],
      [{ resourceName: '' }, ErrorCode.INVALID_REQUEST, EMPTY_NAME_MESSAGE],
      [{ resourcePatternType: PatternType.MATCH }, ErrorCode.INVALID_REQUEST, 'Invalid patternType MATCH'],
      [{ resourcePatternType: PatternType.ANY }, ErrorCode.INVALID_REQUEST, 'Invalid patternType ANY'],
      [{ resourcePatternType: 9 }, ErrorCode.INVALID_REQUEST, 'Invalid patternType UNKNOWN'],
      [{ resourceType: ResourceType.ANY }, ErrorCode.INVALID_REQUEST, 'Invalid resourceType ANY'],
      [{ resourceType: 0 }, ErrorCode.INVALID_REQUEST, 'Invalid resourceType UNKNOWN'],
      [{ resourceType: 99 }, ErrorCode.INVALID_REQUEST, 'Invalid resourceType UNKNOWN'],
      [{ operation: AclOperation.ANY }, ErrorCode.INVALID_REQUEST, 'Invalid operation ANY'],
      [{ operation: 42 }, ErrorCode.INVALID_REQUEST, 'Invalid operation UNKNOWN'],
      [{ permissionType: AclPermissionType.ANY }, ErrorCode.INVALID_REQUEST, 'Invalid permissionType ANY'],
      [{ principal: 'alice' }, ErrorCode.INVALID_REQUEST, 'Could not parse principal from `alice` (no colon is present separating the principal type from the principal name)'],
      [{ principal: 'User:*', host: '10.0.0.9', resourceName: 'orders-', resourcePatternType: PREFIXED, permissionType: DENY }, ErrorCode.NONE, null],
      [{ operation: AclOperation.TWO_PHASE_COMMIT, resourceType: ResourceType.TRANSACTIONAL_ID, resourceName: 'tx' }, ErrorCode.NONE, null],
    ];
    const response = await handleCreateAclsWith(acls, admin, createRequest(cases.map(([draft]) => creation(draft))));
    expect(response.results).toEqual(cases.map(([, errorCode, errorMessage]) => ({ errorCode, errorMessage })));
    expect(acls.authorizer.aclCount()).toBe(4);
  });

  test('a store failure answers REQUEST_TIMED_OUT (Kafka: the controller did not commit in time) with its message, never a silent success nor UNKNOWN_SERVER_ERROR', async () => {
    const store = new MemoryStore();
    const acls = new AclStore(new ControlStore(store, 'cluster'), new Authorizer({ superUsers: ['User:admin'] }));
    await acls.refresh();
    store.injectFault({ operation: 'put', kind: 'Unavailable', count: 100 });
    const response = await handleCreateAclsWith(acls, admin, createRequest([creation(), creation({ resourceName: '' })]));
    expect(response.results.map((r) => r.errorCode)).toEqual([ErrorCode.REQUEST_TIMED_OUT, ErrorCode.INVALID_REQUEST]);
    expect(response.results[0]!.errorMessage).toContain('Unavailable');
  });
});

describe('DescribeAcls', () => {
  test('one resource per pattern with its ACLs; MATCH selects what applies to a name', async () => {
    const acls = await service();
    await handleCreateAclsWith(
      acls,
      admin,
      createRequest([
        creation(),
        creation({ operation: AclOperation.WRITE, host: '10.0.0.1' }),
        creation({ resourceName: 'ord', resourcePatternType: PREFIXED, principal: 'User:bob' }),
        creation({ resourceName: '*', permissionType: DENY, operation: AclOperation.DELETE }),
        creation({ resourceType: GROUP, resourceName: 'orders' }),
      ]),
    );
    const described = handleDescribeAclsWith(acls, admin, describeRequest({ resourceTypeFilter: TOPIC, resourceNameFilter: 'orders', patternTypeFilter: PatternType.MATCH }));
    expect(described.errorCode).toBe(ErrorCode.NONE);
    expect(described.resources).toEqual([
      {
        resourceType: TOPIC,
        resourceName: '*',
        patternType: LITERAL,
        acls: [{ principal: 'User:alice', host: '*', operation: AclOperation.DELETE, permissionType: DENY }],
      },
      {
        resourceType: TOPIC,
        resourceName: 'orders',
        patternType: LITERAL,
        acls: [
          { principal: 'User:alice', host: '*', operation: AclOperation.READ, permissionType: ALLOW },
          { principal: 'User:alice', host: '10.0.0.1', operation: AclOperation.WRITE, permissionType: ALLOW },
        ],
      },
      { resourceType: TOPIC, resourceName: 'ord', patternType: PREFIXED, acls: [{ principal: 'User:bob', host: '*', operation: AclOperation.READ, permissionType: ALLOW }] },
    ]);
    const literalOnly = handleDescribeAclsWith(acls, admin, describeRequest({ resourceTypeFilter: TOPIC, resourceNameFilter: 'orders', patternTypeFilter: LITERAL }));
    expect(literalOnly.resources.map((r) => r.resourceName)).toEqual(['orders']);
    const byPrincipal = handleDescribeAclsWith(acls, admin, describeRequest({ principalFilter: 'User:bob' }));
    expect(byPrincipal.resources.map((r) => r.resourceName)).toEqual(['ord']);
  });

  test('a filter with a type Kafka does not know is INVALID_REQUEST', async () => {
    const acls = await service();
    for (const draft of [{ resourceTypeFilter: 0 }, { patternTypeFilter: 0 }, { operation: 77 }, { permissionType: 0 }]) {
      const described = handleDescribeAclsWith(acls, admin, describeRequest(draft));
      expect([described.errorCode, described.errorMessage]).toEqual([ErrorCode.INVALID_REQUEST, DESCRIBE_ACLS_UNKNOWN_MESSAGE]);
    }
  });
});

describe('DeleteAcls', () => {
  test('each filter lists the ACLs it matched and deleted; an unknown filter is INVALID_REQUEST', async () => {
    const acls = await service();
    await handleCreateAclsWith(acls, admin, createRequest([creation(), creation({ resourceName: 'ord', resourcePatternType: PREFIXED, operation: AclOperation.WRITE })]));
    const response = await handleDeleteAclsWith(acls, admin, deleteRequest([filter({ operation: AclOperation.WRITE }), filter({ resourceTypeFilter: 0 }), filter({ principalFilter: 'User:nobody' })]));
    expect(response.filterResults).toEqual([
      {
        errorCode: ErrorCode.NONE,
        errorMessage: null,
        matchingAcls: [
          {
            errorCode: ErrorCode.NONE,
            errorMessage: null,
            resourceType: TOPIC,
            resourceName: 'ord',
            patternType: PREFIXED,
            principal: 'User:alice',
            host: '*',
            operation: AclOperation.WRITE,
            permissionType: ALLOW,
          },
        ],
      },
      { errorCode: ErrorCode.INVALID_REQUEST, errorMessage: 'Unknown patternFilter.', matchingAcls: [] },
      { errorCode: ErrorCode.NONE, errorMessage: null, matchingAcls: [] },
    ]);
    expect(acls.authorizer.aclCount()).toBe(1);
  });

  test('a store failure is REQUEST_TIMED_OUT on the filter (no listing) or on each ACL (no write)', async () => {
    const failing: AclService = {
      authorizer: new Authorizer({ superUsers: ['User:admin'] }),
      acls: () => [],
      create: async () => [],
      delete: async () => [
        { error: { kind: 'Storage', message: 'control records: Throttled' }, deletions: [] },
        {
          error: null,
          deletions: [
            {
              binding: { pattern: { resourceType: TOPIC, name: 't', patternType: LITERAL }, entry: { principal: 'User:a', host: '*', operation: AclOperation.READ, permissionType: ALLOW } },
              error: { kind: 'Storage', message: 'put failed' },
            },
          ],
        },
      ],
    };
    const response = await handleDeleteAclsWith(failing, admin, deleteRequest([filter(), filter()]));
    expect(response.filterResults[0]).toEqual({ errorCode: ErrorCode.REQUEST_TIMED_OUT, errorMessage: 'control records: Throttled', matchingAcls: [] });
    expect(response.filterResults[1]!.matchingAcls.map((acl) => [acl.errorCode, acl.errorMessage, acl.resourceName])).toEqual([[ErrorCode.REQUEST_TIMED_OUT, 'put failed', 't']]);
  });
});

test('the answers encode in every version the codecs serve', async () => {
  const acls = await service();
  await handleCreateAclsWith(acls, admin, createRequest([creation()]));
  for (let version = describeAclsCodec.minVersion; version <= describeAclsCodec.maxVersion; version++) {
    describeAclsCodec.encodeResponse(new KafkaWriter(), version, handleDescribeAclsWith(acls, admin, describeRequest({ patternTypeFilter: LITERAL })));
    createAclsCodec.encodeResponse(new KafkaWriter(), version, await handleCreateAclsWith(acls, admin, createRequest([creation()])));
  }
  const deleted = await handleDeleteAclsWith(acls, admin, deleteRequest([filter({ patternTypeFilter: LITERAL })]));
  for (let version = deleteAclsCodec.minVersion; version <= deleteAclsCodec.maxVersion; version++) deleteAclsCodec.encodeResponse(new KafkaWriter(), version, deleted);
  expect(deleted.filterResults[0]!.matchingAcls).toHaveLength(1);
});
