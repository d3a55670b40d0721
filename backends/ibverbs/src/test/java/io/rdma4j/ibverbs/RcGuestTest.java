package io.rdma4j.ibverbs;

import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_LINK_LAYER_ETHERNET;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_MTU_256;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QPS_ERR;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QPS_RTS;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QP_DEST_QPN;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QP_PATH_MTU;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QP_RQ_PSN;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QP_SQ_PSN;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_SEND_INLINE;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_SEND_SIGNALED;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WC_RDMA_READ;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WC_RECV;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WC_REM_ACCESS_ERR;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WC_SEND;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WR_ATOMIC_CMP_AND_SWP;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WR_ATOMIC_FETCH_AND_ADD;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WR_RDMA_WRITE;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WR_SEND;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WR_SEND_WITH_IMM;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.ClosedException;
import io.rdma4j.ibverbs.ffi.Poll;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** RC verbs on real Soft-RoCE, two queue pairs of one process connected to each other through rxe0. */
@Tag("testvm")
class RcGuestTest {
    private Context ctx;
    private Arena arena;
    private ProtectionDomain pd;
    private CompletionQueue cq;
    private int gid;
    private WorkCompletions wcs;

    @BeforeEach
    void open() {
        ctx = Rxe.open();
        arena = Arena.ofShared();
        pd = ctx.allocPd();
        cq = ctx.createCq(256);
        gid = Rxe.gidIndex(ctx);
        wcs = new WorkCompletions(16);
    }

    @AfterEach
    void close() {
        if (ctx != null) {
            ctx.close(); // closes every QP, CQ, MR and PD made from it first
        }
        if (arena != null && arena.scope().isAlive()) {
            arena.close();
        }
        if (wcs != null) {
            wcs.close();
        }
    }

    private QueuePair rcQp() {
        return pd.createQp(
                QpInitAttr.rc(cq).maxSendWr(64).maxRecvWr(64).maxSendSge(2).maxInlineData(64));
    }

    private MemoryRegion region(long bytes) {
        return pd.register(arena.allocate(bytes, 4096), Rxe.ACCESS);
    }

    @Test
    void devicePortAndGidTableAreReadable() {
        DeviceAttr d = ctx.queryDevice();
        assertTrue(d.maxQp() > 0 && d.maxCqe() > 0 && d.physPortCnt() >= 1, d.toString());
        PortAttr p = ctx.queryPort(Rxe.PORT);
        assertTrue(p.isActive(), "port 1 of rxe0 should be ACTIVE: " + p);
        assertEquals(IBV_LINK_LAYER_ETHERNET, p.linkLayer());
        GidEntry e = ctx.gidTable().stream()
                .filter(g -> g.index() == gid)
                .findFirst()
                .orElseThrow();
        assertTrue(e.isIpv4Mapped());
        assertEquals(
                java.util.HexFormat.of().formatHex(e.gid()),
                java.util.HexFormat.of().formatHex(ctx.queryGid(Rxe.PORT, gid)));
        assertThrows(IllegalArgumentException.class, () -> ctx.queryPort(0));
    }

    @Test
    void connectRcNegotiatesTheSmallerMtuAndReachesRts() {
        QueuePair a = rcQp();
        QueuePair b = rcQp();
        QpInfo ib = Verbs.localQpInfo(b, Rxe.PORT, gid);
        QpInfo smaller = new QpInfo(ib.qpNum(), ib.psn(), ib.lid(), ib.gid(), ib.port(), IBV_MTU_256);
        Verbs.connectRc(a, smaller, Rxe.PORT, gid, Rxe.ACCESS);
        assertEquals(IBV_QPS_RTS, a.state());
        QpAttr q = a.query(IBV_QP_PATH_MTU | IBV_QP_DEST_QPN | IBV_QP_RQ_PSN | IBV_QP_SQ_PSN);
        assertEquals(IBV_QPS_RTS, q.state());
        assertEquals(IBV_MTU_256, q.pathMtu());
        assertEquals(b.qpNum(), q.destQpNum());
        assertEquals(ib.psn(), q.rqPsn());
        assertEquals(a.localPsn(), q.sqPsn());
    }

    @Test
    void readsRemoteMemory() {
        QueuePair a = rcQp();
        QueuePair b = rcQp();
        Rxe.connect(a, b, gid);
        MemoryRegion local = region(8192);
        MemoryRegion remote = region(8192);
        for (int i = 0; i < 2048; i++) {
            remote.segment().setAtIndex(ValueLayout.JAVA_INT, i, ~i);
        }
        try (SendWr wr = new SendWr(1)) {
            assertEquals(0, a.postSend(wr.read(5, local, 0, 8192, remote.address(), remote.rkey(), IBV_SEND_SIGNALED)));
            Rxe.await(cq, wcs, 1, 30_000, (w, i) -> {
                w.throwIfError(i);
                assertEquals(IBV_WC_RDMA_READ, w.opcode(i));
                assertEquals(5, w.wrId(i));
                assertEquals(8192, w.byteLen(i));
            });
        }
        assertEquals(-1, local.segment().mismatch(remote.segment()));
    }

    @Test
    void sendsAndReceivesWithImmediateAndInlineData() {
        QueuePair a = rcQp();
        QueuePair b = rcQp();
        Rxe.connect(a, b, gid);
        MemoryRegion rbuf = region(4096);
        MemoryRegion sbuf = region(4096);
        sbuf.segment().asSlice(0, 11).copyFrom(MemorySegment.ofArray("hello verbs".getBytes()));
        MemorySegment inline = arena.allocate(16);
        inline.copyFrom(MemorySegment.ofArray("inline-bytes-16!".getBytes()));
        try (SendWr s1 = new SendWr(1);
                SendWr s2 = new SendWr(1);
                RecvWr r1 = new RecvWr(1);
                RecvWr r2 = new RecvWr(1)) {
            r1.wrId(101).sge(rbuf, 0, 2048);
            r2.wrId(102).sge(rbuf, 2048, 2048);
            assertEquals(0, b.postRecv(r1.next(r2)));
            s1.wrId(1)
                    .opcode(IBV_WR_SEND_WITH_IMM)
                    .sge(sbuf, 0, 11)
                    .immData(0xABCD)
                    .flags(IBV_SEND_SIGNALED);
            s2.wrId(2)
                    .opcode(IBV_WR_SEND)
                    .inlineSge(0, inline, 0, 16)
                    .numSge(1)
                    .flags(IBV_SEND_SIGNALED | IBV_SEND_INLINE);
            assertEquals(0, a.postSend(s1.next(s2)));
            List<String> seen = new ArrayList<>();
            Rxe.await(cq, wcs, 4, 30_000, (w, i) -> {
                w.throwIfError(i);
                boolean recv = (w.opcode(i) & IBV_WC_RECV) != 0; // byte_len and imm_data are defined for receives only
                seen.add(w.wrId(i) + ":" + w.opcode(i)
                        + (recv
                                ? ":" + w.byteLen(i) + (w.hasImm(i) ? ":imm" + Integer.toHexString(w.immData(i)) : "")
                                : ""));
            });
            assertTrue(seen.contains("101:" + IBV_WC_RECV + ":11:immabcd"), seen.toString());
            assertTrue(seen.contains("102:" + IBV_WC_RECV + ":16"), seen.toString());
            assertTrue(seen.contains("1:" + IBV_WC_SEND) && seen.contains("2:" + IBV_WC_SEND), seen.toString());
        }
        assertEquals("hello verbs", new String(rbuf.segment().asSlice(0, 11).toArray(ValueLayout.JAVA_BYTE)));
        assertEquals(
                "inline-bytes-16!", new String(rbuf.segment().asSlice(2048, 16).toArray(ValueLayout.JAVA_BYTE)));
    }

    @Test
    void atomicsFetchAddAndCompareSwap() {
        QueuePair a = rcQp();
        QueuePair b = rcQp();
        Rxe.connect(a, b, gid);
        MemoryRegion target = region(4096);
        MemoryRegion result = region(4096);
        target.segment().set(ValueLayout.JAVA_LONG, 0, 40);
        try (SendWr wr = new SendWr(1)) {
            wr.wrId(1)
                    .opcode(IBV_WR_ATOMIC_FETCH_AND_ADD)
                    .sge(result, 0, 8)
                    .atomic(target.address(), target.rkey(), 2, 0)
                    .flags(IBV_SEND_SIGNALED);
            assertEquals(0, a.postSend(wr));
            Rxe.await(cq, wcs, 1, 30_000, Rxe.SUCCESS);
            assertEquals(40, result.segment().get(ValueLayout.JAVA_LONG, 0));
            wr.wrId(2)
                    .opcode(IBV_WR_ATOMIC_CMP_AND_SWP)
                    .sge(result, 8, 8)
                    .atomic(target.address(), target.rkey(), 42, 7);
            assertEquals(0, a.postSend(wr));
            Rxe.await(cq, wcs, 1, 30_000, Rxe.SUCCESS);
            assertEquals(42, result.segment().get(ValueLayout.JAVA_LONG, 8));
            assertEquals(7, target.segment().get(ValueLayout.JAVA_LONG, 0));
        }
    }

    /**
     * 64 MiB written across four RC queue pairs in 1 MiB requests, each queue pair one 16 MiB shard, selectively
     * signaled (every fourth request). Soft-RoCE under TCG moves about 30 MB/s, so this takes a few seconds in the VM.
     */
    @Test
    void shardedWriteOf64MiBAcrossFourQueuePairs() {
        final int lanes = 4;
        final long total = 64L << 20;
        final int chunk = 1 << 20;
        long shard = total / lanes;
        MemoryRegion src = region(total);
        MemoryRegion dst = region(total);
        for (long i = 0; i < total / 8; i++) {
            src.segment().setAtIndex(ValueLayout.JAVA_LONG, i, i * 0x9E3779B97F4A7C15L);
        }
        List<QueuePair> senders = new ArrayList<>();
        for (int l = 0; l < lanes; l++) {
            QueuePair a = rcQp();
            QueuePair b = rcQp();
            Rxe.connect(a, b, gid);
            senders.add(a);
        }
        int perLane = (int) (shard / chunk);
        int signaledTotal = 0;
        try (SendWr wr = new SendWr(1)) {
            for (int k = 0; k < perLane; k++) {
                for (int l = 0; l < lanes; l++) {
                    long off = l * shard + (long) k * chunk;
                    boolean signal = (k % 4 == 3) || k == perLane - 1;
                    int rc = senders.get(l)
                            .postSend(wr.write(
                                    l * 1000L + k,
                                    src,
                                    off,
                                    chunk,
                                    dst.address() + off,
                                    dst.rkey(),
                                    signal ? IBV_SEND_SIGNALED : 0));
                    assertEquals(0, rc, "post on lane " + l);
                    signaledTotal += signal ? 1 : 0;
                }
            }
            Rxe.await(cq, wcs, signaledTotal, 300_000, Rxe.SUCCESS);
        }
        assertEquals(-1, src.segment().mismatch(dst.segment()), "destination differs from source");
    }

    /**
     * The data path allocates nothing per request: 5 000 posts and polls (after a warm-up) allocate less than 16 KiB on
     * this thread in all, under 4 bytes per request, where one object per request would be 16 bytes or more.
     */
    @Test
    void postingAndPollingAllocateNothingPerRequest() {
        QueuePair a = rcQp();
        QueuePair b = rcQp();
        Rxe.connect(a, b, gid);
        MemoryRegion mr = region(4096);
        var threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        long tid = Thread.currentThread().threadId();
        try (SendWr wr = new SendWr(1)) {
            wr.write(0, mr, 0, 64, mr.address() + 2048, mr.rkey(), IBV_SEND_SIGNALED);
            long[] allocated = new long[2];
            for (int round = 0; round < 2; round++) {
                long before = threads.getThreadAllocatedBytes(tid);
                for (int i = 0; i < 5_000; i++) {
                    if (a.postSend(wr.wrId(i)) != 0) {
                        throw new AssertionError("ibv_post_send failed at " + i);
                    }
                    int n;
                    while ((n = cq.poll(wcs)) == 0) {
                        Thread.onSpinWait();
                    }
                    if (n < 0 || !wcs.isSuccess(0)) {
                        throw new AssertionError("completion failed at " + i);
                    }
                }
                allocated[round] = threads.getThreadAllocatedBytes(tid) - before;
            }
            // round 0 warms the JIT up; round 1 is measured
            assertTrue(
                    allocated[1] < 16 * 1024,
                    "5000 post+poll cycles allocated " + allocated[1] + " bytes (warm-up round: " + allocated[0] + ")");
        }
    }

    @Test
    void wrongRkeyGivesRemoteAccessErrorAndARebuiltQueuePairWorks() {
        QueuePair a = rcQp();
        QueuePair b = rcQp();
        Rxe.connect(a, b, gid);
        MemoryRegion src = region(4096);
        MemoryRegion dst = region(4096);
        src.segment().fill((byte) 0x5A);
        try (SendWr wr = new SendWr(1)) {
            assertEquals(
                    0, a.postSend(wr.write(77, src, 0, 4096, dst.address(), dst.rkey() ^ 0x5A5A00, IBV_SEND_SIGNALED)));
            int[] status = {-1};
            Rxe.await(cq, wcs, 1, 60_000, (w, i) -> {
                status[0] = w.status(i);
                VerbsException e = assertThrows(VerbsException.class, () -> w.throwIfError(i));
                assertTrue(
                        e.getMessage().contains("IBV_WC_REM_ACCESS_ERR")
                                && e.getMessage().contains("wr_id=77"),
                        e.getMessage());
                assertEquals(IBV_WC_REM_ACCESS_ERR, e.wcStatus());
            });
            assertEquals(IBV_WC_REM_ACCESS_ERR, status[0]);
            assertEquals(IBV_QPS_ERR, a.refreshState());
            // the data path refuses the broken queue pair in Java once its state is known
            assertThrows(IllegalStateException.class, () -> a.postSend(wr));
            drain();
            a.close();
            b.close();
            QueuePair a2 = rcQp();
            QueuePair b2 = rcQp();
            Rxe.connect(a2, b2, gid);
            assertEquals(0, a2.postSend(wr.write(78, src, 0, 4096, dst.address(), dst.rkey(), IBV_SEND_SIGNALED)));
            Rxe.await(cq, wcs, 1, 30_000, Rxe.SUCCESS);
        }
        assertEquals(-1, src.segment().mismatch(dst.segment()));
    }

    private void drain() {
        while (cq.poll(wcs) > 0) {
            // flushed completions of the failed queue pairs
        }
    }

    @Test
    void outOfBoundsLocalSgeIsRejectedBeforePosting() {
        QueuePair a = rcQp();
        QueuePair b = rcQp();
        MemoryRegion mr = region(4096);
        try (SendWr wr = new SendWr(2);
                RecvWr rwr = new RecvWr(1)) {
            var e = assertThrows(IndexOutOfBoundsException.class, () -> wr.sge(0, mr, 4000, 200));
            assertTrue(e.getMessage().contains("4096 bytes"), e.getMessage());
            assertThrows(IndexOutOfBoundsException.class, () -> wr.sge(0, mr, -1, 10));
            assertThrows(IndexOutOfBoundsException.class, () -> rwr.sge(0, mr, 4096, 1));
            assertThrows(IndexOutOfBoundsException.class, () -> mr.sge(1, 4096));
            // wrong state: a queue pair in RESET takes no send and no receive
            wr.write(1, mr, 0, 64, mr.address(), mr.rkey(), IBV_SEND_SIGNALED);
            var s = assertThrows(IllegalStateException.class, () -> a.postSend(wr));
            assertTrue(s.getMessage().contains("RESET"), s.getMessage());
            assertThrows(IllegalStateException.class, () -> a.postRecv(rwr.sge(mr, 0, 64)));
            Rxe.connect(a, b, gid);
            // more SGEs than the queue pair allows, a remote range past the peer's region
            wr.sge(0, mr, 0, 8).sge(1, mr, 8, 8).numSge(2);
            assertEquals(0, a.postSend(wr.flags(0)));
            int tooMany = a.maxSendSge() + 1; // the provider may grant more SGEs than asked for
            try (SendWr many = new SendWr(tooMany)) {
                many.wrId(3).opcode(IBV_WR_RDMA_WRITE).rdma(mr.address(), mr.rkey());
                for (int i = 0; i < tooMany; i++) {
                    many.sge(i, mr, 8L * i, 8);
                }
                many.numSge(tooMany);
                var e2 = assertThrows(IllegalArgumentException.class, () -> a.postSend(many));
                assertTrue(e2.getMessage().contains("max_send_sge"), e2.getMessage());
            }
            wr.sge(mr, 0, 128).rdma(mr.remote(0, 64), 0);
            assertThrows(IndexOutOfBoundsException.class, () -> a.postSend(wr));
            // a closed region, and a region over freed memory
            MemoryRegion gone = region(4096);
            wr.sge(gone, 0, 64).rdma(mr.address(), mr.rkey());
            gone.close();
            assertThrows(ClosedException.class, () -> a.postSend(wr));
            Arena shortLived = Arena.ofShared();
            MemoryRegion freed = pd.register(shortLived.allocate(4096), Rxe.ACCESS);
            wr.sge(freed, 0, 64);
            shortLived.close();
            var f = assertThrows(IllegalStateException.class, () -> a.postSend(wr));
            assertTrue(f.getMessage().contains("freed"), f.getMessage());
            freed.close();
        }
    }

    @Test
    void sharedReceiveQueueFeedsTwoQueuePairs() {
        SharedReceiveQueue srq = pd.createSrq(32, 1, 0);
        QpInitAttr withSrq = QpInitAttr.rc(cq).srq(srq).maxSendWr(16);
        QueuePair r1 = pd.createQp(withSrq);
        QueuePair r2 = pd.createQp(withSrq);
        QueuePair s1 = rcQp();
        QueuePair s2 = rcQp();
        Rxe.connect(s1, r1, gid);
        Rxe.connect(s2, r2, gid);
        MemoryRegion buf = region(4096);
        try (RecvWr rwr = new RecvWr(1);
                SendWr wr = new SendWr(1)) {
            for (int i = 0; i < 4; i++) {
                assertEquals(0, srq.postRecv(rwr.wrId(500 + i).sge(buf, 1024L * i, 1024)));
            }
            assertThrows(IllegalStateException.class, () -> r1.postRecv(rwr));
            assertEquals(0, s1.postSend(wr.send(1, buf, 0, 16, IBV_SEND_SIGNALED)));
            assertEquals(0, s2.postSend(wr.send(2, buf, 0, 16, IBV_SEND_SIGNALED)));
            List<Integer> recvQps = new ArrayList<>();
            Rxe.await(cq, wcs, 4, 30_000, (w, i) -> {
                w.throwIfError(i);
                if (w.opcode(i) == IBV_WC_RECV) {
                    recvQps.add(w.qpNum(i));
                }
            });
            assertTrue(recvQps.contains(r1.qpNum()) && recvQps.contains(r2.qpNum()), recvQps.toString());
        }
    }

    @Test
    void completionChannelWakesAWaiterAndAsyncEventsPollEmpty() {
        CompletionChannel ch = ctx.createCompletionChannel();
        CompletionQueue ecq = ctx.createCq(16, ch, 0);
        QueuePair a = pd.createQp(QpInitAttr.rc(ecq));
        QueuePair b = pd.createQp(QpInitAttr.rc(ecq));
        Rxe.connect(a, b, gid);
        MemoryRegion buf = region(4096);
        assertNull(ch.waitForEvent(0));
        assertEquals(0, ecq.requestNotify(false));
        try (SendWr wr = new SendWr(1)) {
            assertEquals(0, a.postSend(wr.write(1, buf, 0, 64, buf.address() + 1024, buf.rkey(), IBV_SEND_SIGNALED)));
        }
        CompletionQueue woke = ch.waitForEvent(30_000);
        assertSame(ecq, woke);
        Rxe.await(ecq, wcs, 1, 1_000, Rxe.SUCCESS);
        assertNull(ctx.pollAsyncEvent(0));
    }

    /**
     * The event loop of a polled queue (arm, post, wait on the channels with a reusable {@link Poll.Waiter}, take the
     * event with {@code getEvent(0)}, poll) allocates nothing per round once compiled: 2,000 rounds measured by this
     * thread's allocation counter, where one object per round would be 32,000 bytes or more. Until the JIT has compiled
     * them, native calls through FFM allocate their frames, so the best of up to 16 measurements counts.
     */
    @Test
    void waitingForCompletionEventsAllocatesNothingPerRound() {
        CompletionChannel ch = ctx.createCompletionChannel();
        CompletionChannel quiet = ctx.createCompletionChannel();
        CompletionQueue ecq = ctx.createCq(16, ch, 0);
        QueuePair a = pd.createQp(QpInitAttr.rc(ecq));
        QueuePair b = pd.createQp(QpInitAttr.rc(ecq));
        Rxe.connect(a, b, gid);
        MemoryRegion buf = region(4096);
        var threads = (com.sun.management.ThreadMXBean) java.lang.management.ManagementFactory.getThreadMXBean();
        try (SendWr wr = new SendWr(1);
                Poll.Waiter waiter = new Poll.Waiter()) {
            assertEquals(0, waiter.readable(ch.fd(), quiet.fd(), 0), "nothing is ready yet");
            wr.write(0, buf, 0, 64, buf.address() + 1024, buf.rkey(), IBV_SEND_SIGNALED);
            long best = Long.MAX_VALUE;
            for (int round = 0; round < 16 && best >= 2_000; round++) {
                long before = threads.getCurrentThreadAllocatedBytes();
                for (int i = 0; i < 2_000; i++) {
                    if (ecq.requestNotify(false) != 0 || a.postSend(wr) != 0) {
                        throw new AssertionError("arming or posting failed at " + i);
                    }
                    int ready = waiter.readable(ch.fd(), quiet.fd(), 30_000);
                    if (ready != 1) {
                        throw new AssertionError("the wait returned " + ready + " at " + i + "; expected the channel");
                    }
                    if (ch.getEvent(0) != ecq) {
                        throw new AssertionError("no event for the CQ at " + i);
                    }
                    int n;
                    while ((n = ecq.poll(wcs)) == 0) {
                        Thread.onSpinWait();
                    }
                    if (n < 0 || !wcs.isSuccess(0)) {
                        throw new AssertionError("completion failed at " + i);
                    }
                    if (i % 32 == 31) {
                        ecq.ackEvents();
                    }
                }
                best = Math.min(best, threads.getCurrentThreadAllocatedBytes() - before);
            }
            assertTrue(best < 2_000, "2000 wait rounds allocated " + best + " bytes in the best of 16");
        }
        ecq.close();
        quiet.close();
        ch.close();
    }

    @Test
    void completionEventsTakenUnacknowledgedAreAcknowledgedInABatchAndByClose() {
        CompletionChannel ch = ctx.createCompletionChannel();
        CompletionChannel quiet = ctx.createCompletionChannel();
        CompletionQueue ecq = ctx.createCq(16, ch, 0);
        QueuePair a = pd.createQp(QpInitAttr.rc(ecq));
        QueuePair b = pd.createQp(QpInitAttr.rc(ecq));
        Rxe.connect(a, b, gid);
        MemoryRegion buf = region(4096);
        assertNull(ch.getEvent(0));
        assertEquals(0, Poll.readable(ch.fd(), quiet.fd(), 0));
        try (SendWr wr = new SendWr(1)) {
            for (int i = 0; i < 3; i++) {
                assertEquals(0, ecq.requestNotify(false));
                assertEquals(
                        0, a.postSend(wr.write(i, buf, 0, 64, buf.address() + 1024, buf.rkey(), IBV_SEND_SIGNALED)));
                assertEquals(1, Poll.readable(ch.fd(), quiet.fd(), 30_000), "only the completion channel has an event");
                assertSame(ecq, ch.getEvent(0));
                Rxe.await(ecq, wcs, 1, 1_000, Rxe.SUCCESS);
                if (i == 1) {
                    assertEquals(2, ecq.ackEvents());
                    assertEquals(0, ecq.ackEvents());
                }
            }
        }
        // the third event is still unacknowledged: ibv_destroy_cq would wait for it forever unless close acknowledges
        // it
        ecq.close();
        assertTrue(a.isClosed() && ecq.isClosed());
        quiet.close();
        ch.close();
    }

    @Test
    void everyPublicCallOnClosedVerbsObjectsIsAClearError() {
        CompletionChannel ch = ctx.createCompletionChannel();
        CompletionQueue ecq = ctx.createCq(16, ch, 0);
        QueuePair qp = pd.createQp(QpInitAttr.rc(ecq));
        SharedReceiveQueue srq = pd.createSrq(8, 1, 0);
        MemoryRegion mr = region(4096);
        AddressHandle ah = pd.createAh(new AhAttr().port(Rxe.PORT).global(ctx.queryGid(Rxe.PORT, gid), gid, 64, 0, 0));
        ProtectionDomain pd2 = ctx.allocPd();
        ctx.close(); // closes its dependents first, in reverse order
        for (Object o : List.of(ctx, pd, pd2, ch, ecq, qp, srq, mr, ah, cq)) {
            assertTrue(((NativeObject) o).isClosed(), o + " should be closed with its context");
            ClosedAndBadInputTest.everyPublicCallFailsClosed(o);
        }
        ctx = null;
    }

    @Test
    void closingACompletionQueueClosesItsQueuePairsFirst() {
        QueuePair qp = rcQp();
        assertNotNull(qp);
        // destroying the CQ first would fail natively with EBUSY; the dependency graph closes the QP first instead
        cq.close();
        assertTrue(qp.isClosed());
        assertThrows(ClosedException.class, () -> qp.postRecv(null));
    }
}
