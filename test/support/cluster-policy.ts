import type { ClusterPolicy } from '../../src/engine/index.ts';

/**
 * A cluster's policy for an engine a test manages by hand (EngineOptions.cluster): the engine
 * leads whatever it adopts, counts no followers, keeps every incarnation and collects no other
 * writer's streams, unless the test says otherwise.
 */
export function managedBy(overrides: Partial<ClusterPolicy> = {}): ClusterPolicy {
  return {
    checkLeadership: () => {},
    followersOf: () => new Set(),
    incarnationState: async () => 'live',
    writerLiveness: { liveWriterIds: () => new Set(), picks: () => false },
    adopting: () => false,
    ...overrides,
  };
}
