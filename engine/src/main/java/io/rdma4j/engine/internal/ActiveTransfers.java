package io.rdma4j.engine.internal;

import java.util.ArrayList;
import java.util.List;

/**
 * The engine's transfers in flight, for the ends that must reach them all: the engine closing, a peer lost. A transfer
 * links itself into one of a few lists (its fields {@link TransferImpl#activePrev} and
 * {@link TransferImpl#activeNext}), so that tracking it allocates nothing; the list is picked by the launching thread,
 * so that callers and progress threads on different lists do not contend for one lock.
 */
final class ActiveTransfers {
    private static final int LISTS = 16;

    private final Chain[] chains = new Chain[LISTS];

    ActiveTransfers() {
        for (int i = 0; i < LISTS; i++) {
            chains[i] = new Chain();
        }
    }

    /** One doubly-linked list of transfers, guarded by itself. */
    private static final class Chain {
        private TransferImpl first;
        private int size;
    }

    void add(TransferImpl t) {
        int i = (int) (Thread.currentThread().threadId() & (LISTS - 1));
        Chain l = chains[i];
        synchronized (l) {
            t.activeList = i;
            t.activePrev = null;
            t.activeNext = l.first;
            if (l.first != null) {
                l.first.activePrev = t;
            }
            l.first = t;
            l.size++;
        }
    }

    /** Unlinks {@code t}; a transfer not added, or already removed, is left alone. */
    void remove(TransferImpl t) {
        int i = t.activeList;
        if (i < 0) {
            return;
        }
        Chain l = chains[i];
        synchronized (l) {
            if (t.activeList != i) {
                return;
            }
            if (t.activePrev != null) {
                t.activePrev.activeNext = t.activeNext;
            } else {
                l.first = t.activeNext;
            }
            if (t.activeNext != null) {
                t.activeNext.activePrev = t.activePrev;
            }
            t.activePrev = null;
            t.activeNext = null;
            t.activeList = -1;
            l.size--;
        }
    }

    /** {@return how many transfers are in flight} */
    int size() {
        int n = 0;
        for (Chain l : chains) {
            synchronized (l) {
                n += l.size;
            }
        }
        return n;
    }

    /** {@return the transfers in flight to {@code link}, or to every peer when it is null, at the time of the call} */
    List<TransferImpl> snapshot(PeerLink link) {
        List<TransferImpl> out = new ArrayList<>();
        for (Chain l : chains) {
            synchronized (l) {
                for (TransferImpl t = l.first; t != null; t = t.activeNext) {
                    if (link == null || t.peer == link) {
                        out.add(t);
                    }
                }
            }
        }
        return out;
    }
}
