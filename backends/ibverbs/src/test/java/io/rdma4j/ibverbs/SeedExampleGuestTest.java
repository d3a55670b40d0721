package io.rdma4j.ibverbs;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.ffi.ChildJvm;
import io.rdma4j.ibverbs.ffi.VerbsH;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;

/**
 * The seed example on real Soft-RoCE, as two processes that exchange QpInfo bytes through this test: rank 0 writes 1024
 * ints with RDMA_WRITE_WITH_IMM, rank 1 waits for IBV_WC_RECV_RDMA_WITH_IMM carrying the immediate value and checks
 * every int.
 */
@Tag("testvm")
class SeedExampleGuestTest {
    static final int INTS = 1024;
    static final int IMM = 0x5EED0001;

    @Test
    void rankZeroWritesWithImmediateAndRankOneSeesEveryInt() throws Exception {
        Rxe.assumeDevice();
        Process r0 = ChildJvm.start(Rank.class, "0");
        Process r1 = ChildJvm.start(Rank.class, "1");
        try {
            BufferedReader in0 = new BufferedReader(new InputStreamReader(r0.getInputStream(), StandardCharsets.UTF_8));
            BufferedReader in1 = new BufferedReader(new InputStreamReader(r1.getInputStream(), StandardCharsets.UTF_8));
            PrintStream out0 = new PrintStream(r0.getOutputStream(), true, StandardCharsets.UTF_8);
            PrintStream out1 = new PrintStream(r1.getOutputStream(), true, StandardCharsets.UTF_8);
            String info0 = expect(in0, "INFO ");
            String info1 = expect(in1, "INFO ");
            out0.println(info1);
            out1.println(info0);
            expect(in1, "READY");
            out0.println("GO");
            assertEquals("DONE", expect(in0, "DONE"));
            assertEquals("OK imm=" + Integer.toHexString(IMM) + " ints=" + INTS, expect(in1, "OK"));
            assertTrue(r0.waitFor(60, TimeUnit.SECONDS) && r1.waitFor(60, TimeUnit.SECONDS));
            assertEquals(0, r0.exitValue());
            assertEquals(0, r1.exitValue());
        } finally {
            r0.destroyForcibly();
            r1.destroyForcibly();
        }
    }

    private static String expect(BufferedReader in, String prefix) throws Exception {
        String line;
        while ((line = in.readLine()) != null) {
            if (line.startsWith(prefix)) {
                return line;
            }
        }
        throw new AssertionError("child ended before printing " + prefix.strip());
    }

    /** One rank: {@code INFO <qpinfo hex> <addr> <rkey>} out, the peer's line in, then the exchange. */
    public static final class Rank {
        public static void main(String[] args) throws Exception {
            int rank = Integer.parseInt(args[0]);
            BufferedReader stdin = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
            try (Context ctx = Verbs.openDevice(Rxe.DEVICE);
                    Arena arena = Arena.ofShared();
                    WorkCompletions wcs = new WorkCompletions(4);
                    SendWr swr = new SendWr(1);
                    RecvWr rwr = new RecvWr(1)) {
                int gid = Rxe.gidIndex(ctx);
                ProtectionDomain pd = ctx.allocPd();
                CompletionQueue cq = ctx.createCq(16);
                QueuePair qp = pd.createQp(QpInitAttr.rc(cq).maxSendWr(16).maxRecvWr(16));
                MemorySegment buf = arena.allocate(INTS * 4L, 4096);
                MemoryRegion mr = pd.register(buf, Rxe.ACCESS);
                QpInfo mine = Verbs.localQpInfo(qp, Rxe.PORT, gid);
                System.out.println(
                        "INFO " + HexFormat.of().formatHex(mine.encode()) + " " + mr.address() + " " + mr.rkey());
                String[] peer = stdin.readLine().split(" ");
                QpInfo remote = QpInfo.decode(HexFormat.of().parseHex(peer[1]));
                long remoteAddr = Long.parseLong(peer[2]);
                int rkey = Integer.parseInt(peer[3]);
                Verbs.connectRc(qp, remote, Rxe.PORT, gid, Rxe.ACCESS);
                if (rank == 0) {
                    for (int i = 0; i < INTS; i++) {
                        buf.setAtIndex(ValueLayout.JAVA_INT, i, i * 3 + 7);
                    }
                    if (!"GO".equals(stdin.readLine())) {
                        throw new IllegalStateException("expected GO");
                    }
                    int rc = qp.postSend(
                            swr.writeWithImm(1, mr, 0, INTS * 4, remoteAddr, rkey, IMM, VerbsH.IBV_SEND_SIGNALED));
                    if (rc != 0) {
                        throw new VerbsException("ibv_post_send", "", rc);
                    }
                    Rxe.await(cq, wcs, 1, 30_000, Rxe.SUCCESS);
                    System.out.println("DONE");
                } else {
                    // a write with immediate consumes a receive request; it needs no buffer
                    int rc = qp.postRecv(rwr.wrId(9).numSge(0));
                    if (rc != 0) {
                        throw new VerbsException("ibv_post_recv", "", rc);
                    }
                    System.out.println("READY");
                    int[] imm = new int[1];
                    Rxe.await(cq, wcs, 1, 30_000, (w, i) -> {
                        w.throwIfError(i);
                        if (w.opcode(i) != VerbsH.IBV_WC_RECV_RDMA_WITH_IMM || !w.hasImm(i) || w.wrId(i) != 9) {
                            throw new AssertionError(
                                    "expected IBV_WC_RECV_RDMA_WITH_IMM for wr 9, got opcode " + w.opcode(i));
                        }
                        imm[0] = w.immData(i);
                    });
                    for (int i = 0; i < INTS; i++) {
                        int v = buf.getAtIndex(ValueLayout.JAVA_INT, i);
                        if (v != i * 3 + 7) {
                            throw new AssertionError("int " + i + " is " + v);
                        }
                    }
                    System.out.println("OK imm=" + Integer.toHexString(imm[0]) + " ints=" + INTS);
                }
                mr.close(); // before the arena frees the memory
            }
        }
    }
}
