package io.rdma4j.ibverbs;

import static io.rdma4j.ibverbs.ffi.VerbsH.GRH_BYTES;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_SEND_SIGNALED;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WC_GRH;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WC_RECV;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WR_RDMA_WRITE;
import static io.rdma4j.ibverbs.ffi.VerbsH.IBV_WR_SEND;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/** UD send through an address handle on real Soft-RoCE. */
@Tag("testvm")
class UdGuestTest {
    static final int QKEY = 0x11111111;

    @Test
    void udSendArrivesWithGrhThroughAnAddressHandle() {
        try (Context ctx = Rxe.open();
                Arena arena = Arena.ofShared();
                WorkCompletions wcs = new WorkCompletions(8);
                SendWr swr = new SendWr(1);
                RecvWr rwr = new RecvWr(1)) {
            int gid = Rxe.gidIndex(ctx);
            ProtectionDomain pd = ctx.allocPd();
            CompletionQueue cq = ctx.createCq(32);
            QueuePair sender = pd.createQp(QpInitAttr.ud(cq));
            QueuePair receiver = pd.createQp(QpInitAttr.ud(cq));
            sender.activateUd(Rxe.PORT, QKEY);
            receiver.activateUd(Rxe.PORT, QKEY);
            MemoryRegion buf = pd.register(arena.allocate(8192, 4096), Rxe.ACCESS);
            MemorySegment payload = buf.segment().asSlice(4096, 256);
            for (int i = 0; i < 256; i++) {
                payload.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 7));
            }
            // every UD receive starts with 40 bytes of GRH
            assertEquals(0, receiver.postRecv(rwr.wrId(1).sge(buf, 0, GRH_BYTES + 1024)));
            AddressHandle ah =
                    pd.createAh(new AhAttr().port(Rxe.PORT).global(ctx.queryGid(Rxe.PORT, gid), gid, 64, 0, 0));
            // RC-only opcodes and a send without a destination are refused before posting
            swr.wrId(2)
                    .opcode(IBV_WR_RDMA_WRITE)
                    .sge(buf, 4096, 256)
                    .rdma(buf.address(), buf.rkey())
                    .flags(IBV_SEND_SIGNALED);
            assertThrows(IllegalArgumentException.class, () -> sender.postSend(swr));
            swr.opcode(IBV_WR_SEND);
            assertThrows(IllegalArgumentException.class, () -> sender.postSend(swr));
            assertEquals(0, sender.postSend(swr.ud(ah, receiver.qpNum(), QKEY)));
            boolean[] received = {false};
            Rxe.await(cq, wcs, 2, 30_000, (w, i) -> {
                w.throwIfError(i);
                if (w.opcode(i) == IBV_WC_RECV) {
                    assertEquals(GRH_BYTES + 256, w.byteLen(i));
                    assertEquals(sender.qpNum(), w.srcQp(i));
                    assertTrue((w.flags(i) & IBV_WC_GRH) != 0);
                    received[0] = true;
                }
            });
            assertTrue(received[0]);
            assertEquals(-1, buf.segment().asSlice(GRH_BYTES, 256).mismatch(payload));
            buf.close();
        }
    }
}
