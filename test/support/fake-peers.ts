import type { PeerWatch } from '../../src/cluster/membership.ts';
import type { PeerAddress } from '../../src/cluster/peer-links.ts';

/** A PeerWatch that listens nowhere: the test says when a peer exited; it keeps what the node asked it to watch. */
export function fakePeers(port: number) {
  const state = { exited: (_nodeId: number, _incarnation: string) => {}, watched: [] as readonly PeerAddress[], closed: false };
  const peers: PeerWatch = {
    open(_incarnation, exited) {
      state.exited = exited;
      return port;
    },
    watch(named) {
      state.watched = named;
    },
    close() {
      state.closed = true;
    },
  };
  return { peers, state };
}
