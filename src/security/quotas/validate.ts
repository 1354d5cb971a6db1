// Kafka's checks of client quota requests, with its messages: AlterClientQuotasRequest.entries and
// ClientQuotaControlManager (metadata/.../controller/ClientQuotaControlManager.java) for changes,
// ClientQuotasImage.describe (metadata/.../image/ClientQuotasImage.java) for describe filters.
import { isIP } from 'node:net';
import { entityParts, entityText, isQuotaKey, QUOTA_KEY_TYPES, type QuotaEntity, type QuotaEntityPart, type QuotaEntityType, type QuotaKey } from './model.ts';
import { recordKeyError } from './record.ts';

/** Kafka's error codes that quota answers carry (the broker's ErrorCode names them too). */
export const QuotaErrorCode = {
  NONE: 0,
  UNKNOWN_SERVER_ERROR: -1,
  REQUEST_TIMED_OUT: 7,
  CLUSTER_AUTHORIZATION_FAILED: 31,
  UNSUPPORTED_VERSION: 35,
  INVALID_REQUEST: 42,
} as const;

export type QuotaErrorCode = (typeof QuotaErrorCode)[keyof typeof QuotaErrorCode];

export interface QuotaError {
  readonly errorCode: QuotaErrorCode;
  readonly errorMessage: string;
}

/** One entry of an AlterClientQuotas request, as the protocol carries it. */
export interface QuotaAlterationRequest {
  readonly entity: readonly QuotaEntityPart[];
  readonly ops: readonly { readonly key: string; readonly value: number; readonly remove: boolean }[];
}

/** A valid change of one entity: the value each key is set to, or null to remove it. */
export interface QuotaChange {
  readonly entity: QuotaEntity;
  readonly ops: ReadonlyMap<QuotaKey, number | null>;
}

const invalid = (errorMessage: string): QuotaError => ({ errorCode: QuotaErrorCode.INVALID_REQUEST, errorMessage });

/**
 * The entity an entry names, as Kafka's AlterClientQuotasRequest.entries reads it into a map: a
 * type named twice keeps its last name. Parts of types Kafka does not know are kept, to be refused.
 */
export function entityOfParts(parts: readonly QuotaEntityPart[]): Map<string, string | null> {
  const entity = new Map<string, string | null>();
  for (const part of parts) entity.set(part.entityType, part.entityName);
  return entity;
}

/**
 * ClientQuotaControlManager's checks of one entry, in its order: duplicate keys, the entity
 * (known types, no empty names, a valid combination, a valid IP), then each key set (known,
 * greater than 0, whole for LONG keys). Removals are not checked: removing a key that is not set
 * changes nothing. Beyond Kafka: a value must be finite (the records are JSON) and a name must
 * fit a record key (record.ts). Returns the change, or the entry's error.
 */
export function checkAlteration(entry: QuotaAlterationRequest): QuotaChange | QuotaError {
  const names = entityOfParts(entry.entity);
  const ops = new Map<string, number | null>();
  for (const op of entry.ops) {
    if (ops.has(op.key)) return invalid(`Duplicate quota key ${op.key} not updating quota for this entity ${entityText(partsOf(names))}`);
    ops.set(op.key, op.remove ? null : op.value);
  }
  const entity = checkEntity(names);
  if ('errorCode' in entity) return entity;
  const checked = new Map<QuotaKey, number | null>();
  for (const [key, value] of ops) {
    if (value === null) {
      if (isQuotaKey(key)) checked.set(key, null);
      continue;
    }
    const error = valueError(entity, key, value);
    if (error !== null) return error;
    checked.set(key as QuotaKey, value);
  }
  return { entity, ops: checked };
}

function checkEntity(names: ReadonlyMap<string, string | null>): QuotaEntity | QuotaError {
  if (names.size === 0) return invalid('Invalid empty client quota entity');
  const entity: Partial<Record<QuotaEntityType, string | null>> = {};
  for (const [type, name] of names) {
    if (type !== 'user' && type !== 'client-id' && type !== 'ip') return invalid(`Unhandled client quota entity type: ${type}`);
    if (name !== null && name.length === 0) return invalid(`Empty ${type} not supported`);
    entity[type] = name;
  }
  if (entity.ip !== undefined) {
    // Kafka's message, its missing space included.
    if (entity.user !== undefined || entity['client-id'] !== undefined) return invalid('Invalid quota entity combination, IP entity shouldnot be combined with User or ClientId');
    // Kafka also takes a host name it can resolve; Ferry sets no IP quota (UNENFORCED_QUOTA_KEYS), so it resolves none.
    if (entity.ip !== null && isIP(entity.ip) === 0) return invalid(`${entity.ip} is not a valid IP or resolvable host.`);
  }
  const keyError = recordKeyError(entity);
  return keyError === null ? entity : invalid(keyError);
}

function valueError(entity: QuotaEntity, key: string, value: number): QuotaError | null {
  const type = entity.ip === undefined && isQuotaKey(key) ? QUOTA_KEY_TYPES.get(key)! : null;
  if (type === null) return invalid(`Invalid configuration key ${key}`);
  if (value <= 0) return invalid(`Quota ${key} must be greater than 0`);
  if (!Number.isFinite(value)) return invalid(`Quota ${key} must be a finite number`);
  if (type === 'LONG') {
    if (value > LONG_MAX) return invalid(`Proposed value for ${key} is too large for a LONG.`);
    if (Math.abs(value % 1) > FRACTION_EPSILON) return invalid(`${key} cannot be a fractional value.`);
  }
  return null;
}

/** Java's Long.MAX_VALUE as a double (2^63), the comparison Kafka makes. */
const LONG_MAX = 2 ** 63;
/** Kafka's tolerance for a LONG quota's fraction (getErrorForIntegralQuotaValue). */
const FRACTION_EPSILON = 1e-6;

function partsOf(names: ReadonlyMap<string, string | null>): QuotaEntityPart[] {
  const known = [...names].filter(([type]) => type === 'user' || type === 'client-id' || type === 'ip');
  const unknown = [...names].filter(([type]) => !(type === 'user' || type === 'client-id' || type === 'ip'));
  const ordered = entityParts(Object.fromEntries(known) as QuotaEntity);
  return [...ordered, ...unknown.map(([entityType, entityName]) => ({ entityType, entityName }))];
}

/** The parts of an entry's entity as answers echo them (a type named twice once, with its last name). */
export function answeredParts(parts: readonly QuotaEntityPart[]): QuotaEntityPart[] {
  return partsOf(entityOfParts(parts));
}

/** An identity of an entry's entity for finding entries that name the same entity. */
export function answeredEntityId(parts: readonly QuotaEntityPart[]): string {
  const names = entityOfParts(parts);
  return JSON.stringify([...names].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/** DescribeClientQuotas' match types. */
export const MatchType = { EXACT: 0, DEFAULT: 1, SPECIFIED: 2 } as const;

/** One component of a describe filter, as the protocol carries it. */
export interface QuotaFilterComponent {
  readonly entityType: string;
  readonly matchType: number;
  readonly match: string | null;
}

/** A checked filter: types whose name must be equal (null: the default), and types that must be present with any name. */
export interface QuotaFilter {
  readonly exact: ReadonlyMap<QuotaEntityType, string | null>;
  readonly present: ReadonlySet<QuotaEntityType>;
  readonly strict: boolean;
}

/** ClientQuotasImage.describe's checks of a filter, in its order and with its messages; the filter, or the request's error. */
export function checkFilter(components: readonly QuotaFilterComponent[], strict: boolean): QuotaFilter | QuotaError {
  const exact = new Map<QuotaEntityType, string | null>();
  const present = new Set<QuotaEntityType>();
  for (const component of components) {
    const type = component.entityType;
    if (type.length === 0) return invalid('Invalid empty entity type.');
    if (exact.has(type as QuotaEntityType) || present.has(type as QuotaEntityType)) return invalid(`Entity type ${type} cannot appear more than once in the filter.`);
    if (type !== 'user' && type !== 'client-id' && type !== 'ip') return { errorCode: QuotaErrorCode.UNSUPPORTED_VERSION, errorMessage: `Unsupported entity type ${type}` };
    switch (component.matchType) {
      case MatchType.EXACT:
        if (component.match === null) return invalid('Request specified MATCH_TYPE_EXACT, but set match string to null.');
        exact.set(type, component.match);
        break;
      case MatchType.DEFAULT:
        if (component.match !== null) return invalid('Request specified MATCH_TYPE_DEFAULT, but also specified a match string.');
        exact.set(type, null);
        break;
      case MatchType.SPECIFIED:
        if (component.match !== null) return invalid('Request specified MATCH_TYPE_SPECIFIED, but also specified a match string.');
        present.add(type);
        break;
      default:
        return invalid(`Unknown match type ${component.matchType}`);
    }
  }
  const names = (type: QuotaEntityType) => exact.has(type) || present.has(type);
  if (names('ip') && (names('user') || names('client-id'))) {
    return invalid('Invalid entity filter component combination. IP filter component should not be used with user or clientId filter component.');
  }
  return { exact, present, strict };
}

/**
 * Whether a filter selects an entity, as Kafka's image does: every exact type with that name
 * (null: the default entity), every SPECIFIED type with any name, the default included (Kafka's
 * "any specified name" covers `<default>` too: ClientQuotasRequestTest counts it); strict: no
 * other types. No components select every entity, or none when strict.
 */
export function filterMatches(filter: QuotaFilter, entity: QuotaEntity): boolean {
  if (filter.strict && Object.values(entity).filter((name) => name !== undefined).length !== filter.exact.size + filter.present.size) return false;
  for (const [type, name] of filter.exact) if (entity[type] !== name) return false;
  for (const type of filter.present) if (entity[type] === undefined) return false;
  return true;
}
