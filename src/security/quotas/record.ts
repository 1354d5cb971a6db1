// How client quotas are kept in the control metadata: one record per entity, keyed as Kafka kept
// one ZooKeeper znode per entity (`/config/users/<user>/clients/<client-id>`):
//
//   <control>/security/quotas/users/alice                    {"version":1,"quotas":{"producer_byte_rate":1048576}}
//   <control>/security/quotas/users/alice/clients/<default>
//   <control>/security/quotas/clients/app%201
//
// A name is escaped with encodeURIComponent, and a default entity's part is `<default>`, which no
// escaped name can be ('<' escapes to %3C): Kafka's own Sanitizer convention. A record whose last
// quota was removed stays, with no quotas: the store has no conditional delete, and an
// unconditional one could erase a quota another broker had just set on the entity.
import { FerryError } from '../../errors.ts';
import { DEFAULT_ENTITY_NAME, type EntityQuotas, isQuotaKey, type QuotaEntity, type QuotaKey } from './model.ts';

/** Where the quota records live, relative to the control root. */
export const QUOTA_RECORDS_PREFIX = 'security/quotas/';
export const QUOTA_RECORD_VERSION = 1;
/**
 * The longest escaped name a record key may carry per part. The file store (a single broker's
 * security records) holds at most 253 bytes between slashes; an escaped character takes up to 12.
 * A longer name is refused as an invalid request rather than failing in the store.
 */
export const QUOTA_RECORD_NAME_KEY_CHARS_MAX = 240;

/** One record's JSON. */
export interface QuotaRecord {
  readonly version: number;
  readonly quotas: Readonly<Record<string, number>>;
}

/** The key segments of each type: Kafka's ZooKeeper config paths (`users`, `clients`, `ips`). */
const SEGMENT_OF = { user: 'users', 'client-id': 'clients', ip: 'ips' } as const;

/** An entity's record key below QUOTA_RECORDS_PREFIX; null for a name with a lone surrogate (no escaped form). */
export function quotaRecordKey(entity: QuotaEntity): string | null {
  const parts: string[] = [];
  for (const type of ['user', 'client-id', 'ip'] as const) {
    const name = entity[type];
    if (name === undefined) continue;
    if (name !== null && !name.isWellFormed()) return null;
    parts.push(`${SEGMENT_OF[type]}/${name === null ? DEFAULT_ENTITY_NAME : encodeURIComponent(name)}`);
  }
  return parts.join('/');
}

/** Why an entity cannot be a record key (a name too long once escaped, or not well-formed Unicode), or null. */
export function recordKeyError(entity: QuotaEntity): string | null {
  for (const name of Object.values(entity)) {
    if (name === null || name === undefined) continue;
    if (!name.isWellFormed()) return 'Entity name is not well-formed Unicode';
    const length = encodeURIComponent(name).length;
    if (length > QUOTA_RECORD_NAME_KEY_CHARS_MAX) return `Entity name too long: escaped for Ferry's quota record key it takes ${length} characters, more than ${QUOTA_RECORD_NAME_KEY_CHARS_MAX}`;
  }
  return null;
}

/** The entity a record key names; null for a key Ferry does not write. */
export function entityOfRecordKey(key: string): QuotaEntity | null {
  const segments = key.split('/');
  if (segments.length !== 2 && segments.length !== 4) return null;
  const entity: Partial<Record<'user' | 'client-id' | 'ip', string | null>> = {};
  for (let i = 0; i < segments.length; i += 2) {
    const type = typeOfSegment(segments[i]!);
    const name = nameOfSegment(segments[i + 1]!);
    if (type === null || name === undefined || entity[type] !== undefined) return null;
    entity[type] = name;
  }
  // Only the shapes quotaRecordKey writes: users/u, users/u/clients/c, clients/c, ips/i.
  return quotaRecordKey(entity) === key ? entity : null;
}

function typeOfSegment(segment: string): 'user' | 'client-id' | 'ip' | null {
  if (segment === SEGMENT_OF.user) return 'user';
  if (segment === SEGMENT_OF['client-id']) return 'client-id';
  if (segment === SEGMENT_OF.ip) return 'ip';
  return null;
}

/** The name an escaped segment holds (null: the default entity); undefined if it is no escaped name. */
function nameOfSegment(segment: string): string | null | undefined {
  if (segment === DEFAULT_ENTITY_NAME) return null;
  try {
    return decodeURIComponent(segment);
  } catch {
    return undefined;
  }
}

export function encodeQuotaRecord(quotas: EntityQuotas): QuotaRecord {
  return { version: QUOTA_RECORD_VERSION, quotas: Object.fromEntries(quotas) };
}

/** Reads a record's quotas back, checking every field; a record Ferry could not have written is CorruptObject. */
export function decodeQuotaRecord(key: string, record: unknown): EntityQuotas {
  const value = record as Partial<QuotaRecord> | null;
  if (typeof value !== 'object' || value === null || value.version !== QUOTA_RECORD_VERSION || typeof value.quotas !== 'object' || value.quotas === null) {
    throw new FerryError('CorruptObject', `quota record ${key}: not a version ${QUOTA_RECORD_VERSION} quota record`);
  }
  const quotas = new Map<QuotaKey, number>();
  for (const [name, quota] of Object.entries(value.quotas)) {
    if (!isQuotaKey(name) || typeof quota !== 'number' || !Number.isFinite(quota) || quota <= 0) {
      throw new FerryError('CorruptObject', `quota record ${key}: ${JSON.stringify(name.slice(0, 64))} is no quota Ferry sets`);
    }
    quotas.set(name, quota);
  }
  return quotas;
}
