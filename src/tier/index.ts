// Tiered segments (docs/tier-protocol.md, docs/tier-format.md): the object format and its keys.
export * from './keys.ts';
export * from './segment-object.ts';
