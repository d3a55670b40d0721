package io.rdma4j.ibverbs.engine;

import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WC_SUCCESS;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WC_WR_FLUSH_ERR;

import io.rdma4j.Closeables;
import io.rdma4j.engine.spi.Completions;
import io.rdma4j.ibverbs.RecvWr;
import io.rdma4j.ibverbs.VerbsException;
import io.rdma4j.ibverbs.WorkCompletions;
import java.util.ArrayList;
import java.util.List;

/**
 * One lane's completion path, on its progress thread: polls the completion queue, turns work completions into the
 * engine's completions through each connection's context ring, re-posts receives, fences quiet connections, and closes
 * the connections control threads disconnected.
 *
 * <p><b>Errors.</b> An error completion marks the lane failed (posting returns {@code FAILED}) and reports every
 * context still outstanding on that connection as failed. {@link #discardQueued} drops what the completion queue still
 * holds before the lane rebuilds its queue pairs.
 *
 * <p><b>Disconnects.</b> A disconnected connection arrives here through {@link ConnectionTable#takeRetired}: this
 * thread is the only one that posts to or polls its queue pair, so it destroys the queue pair at once, then reports
 * every request still outstanding on it (as failed when not known complete) over as many polls as the caller's capacity
 * needs.
 */
final class CompletionPath implements AutoCloseable {
    private final Lane lane;
    private final SendPath send;
    private final WorkCompletions wcs = new WorkCompletions(64);
    private final RecvWr rwr = new RecvWr(1);
    /** Disconnected connections whose queue pair is gone and whose outstanding contexts are still being reported. */
    private final List<Connection> closing = new ArrayList<>();

    CompletionPath(Lane lane, SendPath send) {
        this.lane = lane;
        this.send = send;
    }

    int poll(Completions out) {
        out.clear();
        Lane l = lane;
        retire(out);
        // contexts already known complete but not reported for lack of room last time
        Connection[] table = l.connections.snapshot();
        for (Connection c : table) {
            if (c != null) {
                c.drain(out);
            }
        }
        int room = out.capacity() - out.count;
        if (room <= 0) {
            return out.count;
        }
        int n = l.cq.poll(wcs, Math.min(room, wcs.capacity()));
        if (n < 0) {
            l.error = "ibv_poll_cq failed on lane " + l.index + ": " + n;
            return out.count;
        }
        for (int i = 0; i < n; i++) {
            long wrId = wcs.wrId(i);
            int status = wcs.status(i);
            if ((wrId & Lane.RECV_TAG) != 0) {
                Connection c = l.connections.find(table, (int) (wrId & 0xFFFF_FFFFL));
                if (status == IBV_WC_SUCCESS) {
                    out.add(Completions.REMOTE_IMMEDIATE, 0, wcs.immData(i));
                    if (c != null && !c.failed) {
                        l.postRecvs(c, 1, rwr);
                    }
                } else if (c != null && !c.failed) {
                    // a flushed receive means the queue pair went to the error state (the peer's request failed)
                    fail(c, c.doneUpTo, status, wcs.vendorErr(i));
                    c.drain(out);
                }
                continue;
            }
            Connection c = l.connections.find(table, (int) (wrId >>> 32));
            if (c == null) {
                continue; // disconnected: retire() reported its requests
            }
            long seq = c.fullSeq(wrId & 0xFFFF_FFFFL);
            if (c.signaledPending > 0) {
                c.signaledPending--;
            }
            if (status == IBV_WC_SUCCESS) {
                c.doneUpTo = Math.max(c.doneUpTo, seq + 1);
                c.drain(out);
            } else if (!c.failed) {
                // in order: everything before seq succeeded, seq and everything after it failed
                c.doneUpTo = Math.max(c.doneUpTo, seq);
                fail(c, seq, status, wcs.vendorErr(i));
                c.drain(out);
            }
        }
        if (n == 0) {
            for (Connection c : table) {
                if (c != null && !c.failed && c.signaledPending == 0 && c.head > c.doneUpTo) {
                    send.fence(c);
                }
            }
        }
        return out.count;
    }

    /**
     * Destroys the queue pairs of newly disconnected connections and reports what they still owe. No lookup finds a
     * retired connection any more, and the send path runs on this thread, so nothing touches the queue pair after this.
     */
    private void retire(Completions out) {
        Lane l = lane;
        for (Connection c; (c = l.connections.takeRetired()) != null; ) {
            try {
                l.destroy(c);
            } catch (RuntimeException e) {
                if (l.error == null) {
                    l.error = "lane " + l.index + ": destroying the queue pair of disconnected connection " + c.index
                            + " failed: " + e.getMessage();
                }
            }
            if (c.doneUpTo < c.head) {
                c.failFrom(
                        c.doneUpTo,
                        IBV_WC_WR_FLUSH_ERR,
                        VerbsException.wcStatusName(IBV_WC_WR_FLUSH_ERR) + " (connection " + c.index + " on lane "
                                + l.index + " was disconnected with the request outstanding)");
            }
            closing.add(c);
        }
        for (int i = closing.size() - 1; i >= 0; i--) {
            Connection c = closing.get(i);
            c.drain(out);
            if (c.allReported()) {
                closing.remove(i);
            }
        }
    }

    /**
     * Marks {@code c} failed from request {@code fromSeq} on and the lane failed: it and every later outstanding
     * request are reported as failed.
     */
    private void fail(Connection c, long fromSeq, int status, int vendorErr) {
        Lane l = lane;
        c.failFrom(
                fromSeq,
                status,
                VerbsException.wcStatusName(status) + " (" + VerbsException.wcStatusText(status) + ")");
        if (l.error == null) {
            l.error = "lane " + l.index + " (" + l.device.ctx.deviceName() + ") connection " + c.index + ", qp "
                    + c.qp.qpNum() + ": "
                    + VerbsException.wcStatusName(status) + " (" + VerbsException.wcStatusText(status)
                    + ", vendor_err " + vendorErr
                    + "); the queue pair is in the error state";
        }
    }

    /**
     * Before a rebuild: drops what the completion queue holds. Flushed completions of failed queue pairs carry nothing
     * new (their contexts were reported as failed); successful ones still complete their requests.
     */
    void discardQueued() {
        Lane l = lane;
        while (l.cq.poll(wcs) > 0) {
            for (int i = 0; i < wcs.count(); i++) {
                long wrId = wcs.wrId(i);
                if ((wrId & Lane.RECV_TAG) != 0) {
                    continue;
                }
                Connection c = l.connections.find((int) (wrId >>> 32));
                if (c == null) {
                    continue;
                }
                if (c.signaledPending > 0) {
                    c.signaledPending--; // else a healthy connection waits forever for this completion before fencing
                }
                if (wcs.status(i) == IBV_WC_SUCCESS && !c.failed) {
                    c.doneUpTo = Math.max(c.doneUpTo, c.fullSeq(wrId & 0xFFFF_FFFFL) + 1);
                }
            }
        }
    }

    @Override
    public void close() {
        Closeables.closeAll(wcs, rwr);
    }
}
