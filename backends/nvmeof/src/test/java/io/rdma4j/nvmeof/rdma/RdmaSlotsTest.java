package io.rdma4j.nvmeof.rdma;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.nvmeof.NvmeConnectionException;
import io.rdma4j.nvmeof.NvmeProtocolException;
import io.rdma4j.nvmeof.internal.Cqe;
import io.rdma4j.nvmeof.internal.FabricQueue.Data;
import io.rdma4j.nvmeof.internal.Sqe;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** The NVMe/RDMA slot table alone: no device, no verbs. */
class RdmaSlotsTest {
    private static RdmaRequest flush(String what) {
        return new RdmaRequest(Sqe.flush(1), Data.NONE, what, true);
    }

    @Test
    void finishesACommandOnlyOnceBothItsSendAndItsResponseCompleted() {
        RdmaSlots t = new RdmaSlots(2, 0);
        RdmaRequest r = flush("Flush");
        assertEquals(RdmaSlots.Taken.STARTED, t.acquire(r));
        assertNull(t.received(Cqe.success(r.cid)), "the capsule slot is still being sent");
        assertSame(r, t.sent(r.cid));

        RdmaRequest s = flush("Flush 2");
        t.acquire(s);
        assertNull(t.sent(s.cid), "no response yet");
        assertSame(s, t.received(Cqe.success(s.cid)));
    }

    @Test
    void refusesAResponseForNoCommandInFlight() {
        RdmaSlots t = new RdmaSlots(2, 0);
        assertThrows(NvmeProtocolException.class, () -> t.received(Cqe.success(1)));
        RdmaRequest r = flush("Flush");
        t.acquire(r);
        t.received(Cqe.success(r.cid));
        assertThrows(NvmeProtocolException.class, () -> t.received(Cqe.success(r.cid)), "a second response");
        assertThrows(NvmeProtocolException.class, () -> t.received(Cqe.success(7)), "beyond the depth");
    }

    @Test
    void queuesBeyondTheDepthAndStartsTheOldestInAFreedSlot() {
        RdmaSlots t = new RdmaSlots(1, 0);
        RdmaRequest first = flush("first");
        RdmaRequest second = flush("second");
        RdmaRequest third = flush("third");
        assertEquals(RdmaSlots.Taken.STARTED, t.acquire(first));
        assertEquals(RdmaSlots.Taken.WAITING, t.acquire(second));
        assertEquals(RdmaSlots.Taken.WAITING, t.acquire(third));
        RdmaSlots.Released out = new RdmaSlots.Released();
        t.release(first, out);
        assertTrue(out.mine);
        assertSame(second, out.next);
        assertEquals(first.cid, second.cid, "the freed identifier is reused");
        t.release(second, out);
        assertSame(third, out.next);
    }

    @Test
    void failingHandsBackEveryRequestOnceAndRefusesLaterOnes() {
        RdmaSlots t = new RdmaSlots(1, 0);
        RdmaRequest busy = flush("busy");
        RdmaRequest waiting = flush("waiting");
        t.acquire(busy);
        t.acquire(waiting);
        NvmeConnectionException why = new NvmeConnectionException("gone");
        assertEquals(List.of(busy, waiting), t.failAll(why));
        assertNull(t.failAll(why), "failing twice does nothing");
        assertSame(why, t.failure());
        assertNull(t.sent(busy.cid), "a SEND completing after the failure finds no command");
        RdmaSlots.Released out = new RdmaSlots.Released();
        t.release(busy, out);
        assertFalse(out.mine, "the failure owns the request");
        assertEquals(RdmaSlots.Taken.FAILED, t.acquire(flush("later")));
    }

    @Test
    void namesATimedRequestPastItsDeadline() {
        long timeout = TimeUnit.MILLISECONDS.toNanos(10);
        RdmaSlots t = new RdmaSlots(2, timeout);
        RdmaRequest aer = new RdmaRequest(Sqe.asyncEventRequest(), Data.NONE, "AER", false);
        RdmaRequest r = flush("Flush");
        t.acquire(aer);
        t.acquire(r);
        long now = System.nanoTime();
        assertNull(t.late(now));
        assertSame(r, t.late(now + 2 * timeout));
        t.received(Cqe.success(r.cid));
        t.sent(r.cid);
        t.release(r, new RdmaSlots.Released());
        assertNull(t.late(now + 2 * timeout), "an untimed request is never late");
    }
}
