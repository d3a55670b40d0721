package io.rdma4j.ibverbs.cm;

import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_CM_EVENT_ADDR_RESOLVED;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_CM_EVENT_CONNECT_REQUEST;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_CM_EVENT_DISCONNECTED;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_CM_EVENT_ESTABLISHED;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_CM_EVENT_REJECTED;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_CM_EVENT_ROUTE_RESOLVED;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_CM_EVENT_UNREACHABLE;
import static io.rdma4j.ibverbs.ffi.RdmaCmaH.RDMA_PS_TCP;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_ACCESS_LOCAL_WRITE;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_ACCESS_REMOTE_WRITE;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QPS_ERR;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QPS_INIT;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_QPS_RTS;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_SEND_SIGNALED;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WC_RECV;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WC_SEND;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.ClosedException;
import io.rdma4j.ibverbs.CompletionQueue;
import io.rdma4j.ibverbs.Context;
import io.rdma4j.ibverbs.MemoryRegion;
import io.rdma4j.ibverbs.ProtectionDomain;
import io.rdma4j.ibverbs.QpInitAttr;
import io.rdma4j.ibverbs.QueuePair;
import io.rdma4j.ibverbs.RecvWr;
import io.rdma4j.ibverbs.SendWr;
import io.rdma4j.ibverbs.Verbs;
import io.rdma4j.ibverbs.WorkCompletions;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * RDMA-CM on real Soft-RoCE: a listener and a client in one process, each with its own event channel, connect over
 * rxe0's IPv4 address with private data both ways, move data over the CM-created queue pairs, and disconnect.
 */
@Tag("testvm")
class RdmaCmGuestTest {
    /** The test VM's address on the rxe0 netdev; override with -Drdma4j.ibverbs.cm.addr. */
    static final String ADDR = System.getProperty("rdma4j.ibverbs.cm.addr", "10.0.2.15");

    @Test
    void connectsWithPrivateDataMovesDataAndDisconnects() throws Exception {
        assumeTrue(
                Verbs.isAvailable() && Verbs.deviceNames().contains("rxe0"),
                "rxe0 is not present: this test runs in the test VM");
        int port = 20000 + ThreadLocalRandom.current().nextInt(20000);
        InetSocketAddress server = new InetSocketAddress(InetAddress.getByName(ADDR), port);
        try (EventChannel sch = EventChannel.create();
                EventChannel cch = EventChannel.create();
                Arena arena = Arena.ofShared();
                WorkCompletions wcs = new WorkCompletions(8);
                SendWr swr = new SendWr(1);
                RecvWr rwr = new RecvWr(1)) {
            CmId listener = CmId.create(sch, RDMA_PS_TCP);
            listener.bind(server);
            listener.listen(8);

            CmId client = CmId.create(cch, RDMA_PS_TCP);
            assertThrows(IllegalStateException.class, client::context); // not bound to a device yet
            client.resolveAddr(null, server, 5000);
            cch.expect(RDMA_CM_EVENT_ADDR_RESOLVED, 10_000);
            client.resolveRoute(5000);
            cch.expect(RDMA_CM_EVENT_ROUTE_RESOLVED, 10_000);
            Context cctx = client.context();
            ProtectionDomain cpd = cctx.allocPd();
            CompletionQueue ccq = cctx.createCq(16);
            QueuePair cqp = client.createQp(cpd, QpInitAttr.rc(ccq).maxSendWr(8).maxRecvWr(8));
            assertEquals(IBV_QPS_INIT, cqp.state());
            MemoryRegion cbuf =
                    cpd.register(arena.allocate(4096, 4096), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
            assertThrows(IllegalArgumentException.class, () -> client.connect(ConnParam.of(new byte[57])));
            client.connect(ConnParam.of("hello from client".getBytes(StandardCharsets.US_ASCII)));

            CmEvent req = sch.expect(RDMA_CM_EVENT_CONNECT_REQUEST, 10_000);
            assertTrue(startsWith(req.privateData(), "hello from client"), Arrays.toString(req.privateData()));
            CmId conn = req.id();
            assertEquals(listener, req.listenId());
            Context sctx = conn.context();
            ProtectionDomain spd = sctx.allocPd();
            CompletionQueue scq = sctx.createCq(16);
            QueuePair sqp = conn.createQp(spd, QpInitAttr.rc(scq).maxSendWr(8).maxRecvWr(8));
            MemoryRegion sbuf =
                    spd.register(arena.allocate(4096, 4096), IBV_ACCESS_LOCAL_WRITE | IBV_ACCESS_REMOTE_WRITE);
            assertEquals(0, sqp.postRecv(rwr.wrId(7).sge(sbuf, 0, 4096)));
            conn.accept(ConnParam.of("welcome".getBytes(StandardCharsets.US_ASCII)));

            CmEvent est = cch.expect(RDMA_CM_EVENT_ESTABLISHED, 10_000);
            assertTrue(startsWith(est.privateData(), "welcome"), Arrays.toString(est.privateData()));
            sch.expect(RDMA_CM_EVENT_ESTABLISHED, 10_000);
            assertEquals(IBV_QPS_RTS, cqp.state());
            assertEquals(IBV_QPS_RTS, sqp.refreshState());

            MemorySegment msg = cbuf.segment();
            msg.asSlice(0, 12).copyFrom(MemorySegment.ofArray("over rdma_cm".getBytes(StandardCharsets.US_ASCII)));
            assertEquals(0, cqp.postSend(swr.send(1, cbuf, 0, 12, IBV_SEND_SIGNALED)));
            awaitOne(ccq, wcs, IBV_WC_SEND);
            awaitOne(scq, wcs, IBV_WC_RECV);
            assertEquals(
                    "over rdma_cm",
                    new String(
                            sbuf.segment().asSlice(0, 12).toArray(ValueLayout.JAVA_BYTE), StandardCharsets.US_ASCII));

            // the active side's DISCONNECTED waits for the passive side's rdma_disconnect (its DREP)
            client.disconnect();
            sch.expect(RDMA_CM_EVENT_DISCONNECTED, 30_000);
            conn.disconnect();
            cch.expect(RDMA_CM_EVENT_DISCONNECTED, 30_000);
            assertEquals(IBV_QPS_ERR, cqp.state());

            cbuf.close();
            sbuf.close();
            conn.close();
            assertTrue(sqp.isClosed(), "closing the CM id closes its queue pair");
            assertThrows(ClosedException.class, conn::qp);
            client.close();
            listener.close();
            cpd.close();
            spd.close();
            ccq.close();
            scq.close();
        }
    }

    @Test
    void connectingToAPortWithoutListenerIsRejectedOrUnreachable() throws Exception {
        assumeTrue(
                Verbs.isAvailable() && Verbs.deviceNames().contains("rxe0"),
                "rxe0 is not present: this test runs in the test VM");
        InetSocketAddress nowhere = new InetSocketAddress(
                InetAddress.getByName(ADDR), 40000 + ThreadLocalRandom.current().nextInt(20000));
        try (EventChannel ch = EventChannel.create()) {
            CmId id = CmId.create(ch, RDMA_PS_TCP);
            id.resolveAddr(null, nowhere, 5000);
            ch.expect(RDMA_CM_EVENT_ADDR_RESOLVED, 10_000);
            id.resolveRoute(5000);
            ch.expect(RDMA_CM_EVENT_ROUTE_RESOLVED, 10_000);
            ProtectionDomain pd = id.context().allocPd();
            CompletionQueue cq = id.context().createCq(4);
            id.createQp(pd, QpInitAttr.rc(cq));
            id.connect(ConnParam.of(null));
            CmEvent e = ch.poll(30_000);
            assertTrue(
                    e != null && (e.type() == RDMA_CM_EVENT_REJECTED || e.type() == RDMA_CM_EVENT_UNREACHABLE),
                    String.valueOf(e));
            id.close();
            pd.close();
            cq.close();
        }
    }

    private static void awaitOne(CompletionQueue cq, WorkCompletions wcs, int opcode) {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (System.nanoTime() < deadline) {
            if (cq.poll(wcs, 1) == 1) {
                wcs.throwIfError(0);
                assertEquals(opcode, wcs.opcode(0));
                return;
            }
            Thread.onSpinWait();
        }
        throw new AssertionError("no completion within 30 s");
    }

    private static boolean startsWith(byte[] data, String prefix) {
        byte[] p = prefix.getBytes(StandardCharsets.US_ASCII);
        return data.length >= p.length && Arrays.equals(Arrays.copyOf(data, p.length), p);
    }
}
