package io.rdma4j.libfabric;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.rdma4j.ffi.ChildJvm;
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.util.HexFormat;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * A write between two JVM processes: names and region exchanged over the child's stdin/stdout, bytes verified there.
 */
class TwoProcessTest {
    static final long SIZE = 8L << 20;
    static final long CHUNK = 1L << 20;

    @BeforeAll
    static void libfabricPresent() {
        Libfabric.ensureAvailable();
    }

    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp"})
    void writesAcrossProcessesAndTheTargetVerifiesEveryByte(String provider) throws Exception {
        long tag = 0xC0FFEEL;
        Process child = ChildJvm.start(TargetMain.class, provider, Long.toString(SIZE), Long.toString(tag));
        try (InfoList infos = Libfabric.getinfo(Peer.hints(provider));
                Peer me = new Peer(infos.first(), SIZE)) {
            BufferedReader out =
                    new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8));
            PrintStream in = new PrintStream(child.getOutputStream(), true, StandardCharsets.UTF_8);
            HexFormat hex = HexFormat.of();
            assertEquals(
                    "SIGSEGV kept", out.readLine(), "the JVM's SIGSEGV handler in the child after loading libfabric");
            byte[] name = hex.parseHex(field(out.readLine(), "NAME"));
            RemoteRegion region = RemoteRegion.fromBytes(hex.parseHex(field(out.readLine(), "REGION")));
            assertEquals(SIZE, region.length());
            long peer = me.av.insert(name);
            in.println("PEER " + hex.formatHex(me.ep.name()));

            for (long i = 0; i < SIZE; i++) {
                me.buffer.set(ValueLayout.JAVA_BYTE, i, TargetMain.pattern(i));
            }
            int posted = 0;
            for (long off = 0; off < SIZE - CHUNK; off += CHUNK) {
                long o = off;
                postAlone(me, () -> me.ep.write(me.mr, o, CHUNK, peer, region, o, o));
                posted++;
            }
            // the writes must be complete at the initiator before the marker goes out: only then is the remote CQ
            // data a promise that everything before it landed (RDM does not order writes by default)
            int expected = posted;
            waitFor(me, () -> me.contexts.size() == expected);
            long last = SIZE - CHUNK;
            postAlone(me, () -> me.ep.writeData(me.mr, last, CHUNK, tag, peer, region, last, -1));
            waitFor(me, () -> me.contexts.size() == expected + 1);
            assertEquals("VERIFIED " + SIZE, out.readLine());
            assertEquals(true, child.waitFor(30, TimeUnit.SECONDS));
            assertEquals(0, child.exitValue());
        } finally {
            child.destroyForcibly();
        }
    }

    private static String field(String line, String key) {
        if (line == null || !line.startsWith(key + " ")) {
            throw new AssertionError("expected " + key + " from the child, got " + line);
        }
        return line.substring(key.length() + 1);
    }

    private static void postAlone(Peer me, java.util.function.LongSupplier op) {
        long rc;
        while ((rc = op.getAsLong()) == Endpoint.BACK_PRESSURED) {
            me.poll();
        }
        assertEquals(0, rc, Libfabric.statusText(rc));
    }

    private static void waitFor(Peer me, java.util.function.BooleanSupplier done) {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (!done.getAsBoolean()) {
            me.poll();
            if (System.nanoTime() > deadline) {
                throw new AssertionError("timed out; completions so far " + me.contexts.size());
            }
        }
    }
}
