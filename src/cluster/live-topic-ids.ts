import type { Uuid } from '../util/uuid.ts';
import { type ControlStore, RecordCache } from './control-store.ts';
import type { TopicRecord } from './node.ts';

/**
 * The cluster's live topic incarnations, for the tier's sweep of deleted ones: each call lists
 * the topic records again (reading only those whose ETag changed); a topic marked `deleting` [L4]
 * is gone for every broker already, so its id is not live.
 */
export function clusterLiveTopicIds(control: ControlStore): () => Promise<ReadonlySet<Uuid>> {
  const topics = new RecordCache<TopicRecord>(control, 'topics/');
  return async () => {
    const live = new Set<Uuid>();
    for (const { value } of (await topics.refresh()).values()) if (value.deleting !== true) live.add(value.topicId);
    return live;
  };
}
