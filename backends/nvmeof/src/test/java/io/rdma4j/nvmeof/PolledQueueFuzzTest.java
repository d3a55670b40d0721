package io.rdma4j.nvmeof;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.code_intelligence.jazzer.junit.FuzzTest;
import io.rdma4j.nvmeof.internal.Cqe;
import io.rdma4j.nvmeof.internal.Le;
import io.rdma4j.nvmeof.tcp.Pdu;
import io.rdma4j.nvmeof.tcp.PduCodec;
import io.rdma4j.nvmeof.tcp.PolledTcpQueue;
import io.rdma4j.nvmeof.tcp.TcpQueue;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.Arrays;
import java.util.concurrent.TimeUnit;

/**
 * A fuzz target for the polled queue's receive path, the one parser of a target's byte stream that is not a pure
 * function: a loopback peer completes the ICReq/ICResp exchange and the Fabrics Connect properly, then sends the
 * fuzzer's bytes and closes. The queue has four reads, a write through R2T and an in-capsule write in flight. Whatever
 * the bytes, every command must complete exactly once (with a status the peer sent, or {@code FAILED} when the queue
 * failed), the queue must fail only with the exceptions it documents, and nothing may hang. The first input byte picks
 * the digests. {@code ./rdma4j fuzz receivedStream} runs a campaign.
 */
class PolledQueueFuzzTest {
    private static final int COMMANDS = 6;

    @FuzzTest(maxDuration = "30s")
    void receivedStream(byte[] input) throws Exception {
        boolean hd = input.length > 0 && (input[0] & 1) != 0;
        boolean dd = input.length > 0 && (input[0] & 2) != 0;
        byte[] stream = input.length > 0 ? Arrays.copyOfRange(input, 1, input.length) : new byte[0];
        try (ServerSocket server = new ServerSocket(0, 1, InetAddress.getLoopbackAddress());
                Arena arena = Arena.ofConfined()) {
            Thread peer = Thread.ofPlatform().daemon().start(() -> serve(server, hd, dd, stream));
            PolledTcpQueue q = PolledTcpQueue.open(
                    new InetSocketAddress(InetAddress.getLoopbackAddress(), server.getLocalPort()),
                    null,
                    "fuzz",
                    new TcpQueue.Config(1, 8, hd, dd, Duration.ofSeconds(5), Duration.ofSeconds(5), 64 << 10, 4096),
                    new byte[1024]);
            try {
                MemorySegment buf = arena.allocate(64 << 10, 4096);
                for (int i = 0; i < 4; i++) {
                    assertTrue(q.submitIo(false, 1, i * 8L, 8, buf, i * 4096L, 4096, i));
                }
                assertTrue(q.submitIo(true, 1, 64, 16, buf, 16384, 8192, 4)); // through an R2T
                assertTrue(q.submitIo(true, 1, 96, 4, buf, 32768, 2048, 5)); // in the capsule
                int[] seen = new int[COMMANDS];
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (q.inFlight() > 0) {
                    assertTrue(System.nanoTime() < deadline, "the queue hung on the fuzzed stream");
                    q.await((tag, status) -> seen[(int) tag]++, 50_000_000L);
                }
                for (int i = 0; i < COMMANDS; i++) {
                    assertEquals(1, seen[i], "command " + i + " completed " + seen[i] + " times");
                }
                NvmeException why = q.failure();
                assertTrue(
                        why == null || why instanceof NvmeProtocolException || why instanceof NvmeConnectionException,
                        "undocumented failure: " + why);
            } finally {
                q.close();
                peer.join(5000);
            }
        }
    }

    /** Answers ICReq and Connect, sends {@code stream}, closes. */
    private static void serve(ServerSocket server, boolean hd, boolean dd, byte[] stream) {
        try (Socket s = server.accept()) {
            s.setTcpNoDelay(true);
            InputStream in = s.getInputStream();
            OutputStream out = s.getOutputStream();
            in.readNBytes(128); // ICReq
            out.write(PduCodec.encode(new Pdu.IcResp(0, 0, hd, dd, 8192), PduCodec.Settings.INITIAL));
            byte[] ch = in.readNBytes(8); // the Connect capsule: header, SQE, 1 KiB in-capsule data
            byte[] rest = in.readNBytes((int) Le.u32(ch, 4) - 8);
            int cid = Le.u16(rest, 2);
            out.write(PduCodec.encode(
                    new Pdu.CapsuleResp(new Cqe(1, 0, 0, 0, cid, 0).encode()), new PduCodec.Settings(hd, dd, 0)));
            out.flush();
            for (int i = 0; i < COMMANDS; i++) { // the stream answers commands in flight
                byte[] h = in.readNBytes(8);
                if (h.length < 8) {
                    return;
                }
                in.readNBytes((int) Le.u32(h, 4) - 8);
            }
            out.write(stream);
            out.flush();
        } catch (IOException e) {
            // the host closed first: nothing more to send
        }
    }
}
