package io.rdma4j.cli;

import io.rdma4j.engine.Access;
import io.rdma4j.engine.HostMemory;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.Notification;
import io.rdma4j.engine.TransferEngine;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The target process of {@code ./rdma4j demo}, started by {@link DemoCommand} with the provider, the size, the
 * directory's address, the lane count and the chunk size. It builds its own engine, registers and publishes a buffer
 * named {@code landing}, says {@code READY <engine name>}, waits for the initiator's notification (delivered only after
 * every byte landed), says {@code ARRIVED <checksum verdict>}, checks every byte itself, and says {@code VERIFIED n} or
 * {@code MISMATCH offset}. It exits when its stdin closes: the initiator is gone.
 */
public final class DemoTarget {
    /** The tag the demo's write carries. */
    static final long TAG = 0x5244_4d41_346aL;

    private DemoTarget() {}

    /** The byte pattern of the demo: each 8-byte word is derived from its offset, so the target can check it alone. */
    static long word(long offset) {
        long x = offset * 0x9E3779B97F4A7C15L;
        return x ^ (x >>> 29) ^ 0x5DEECE66DL;
    }

    public static void main(String[] args) throws Exception {
        String provider = args[0];
        long size = Long.parseLong(args[1]);
        String directory = args[2];
        int lanes = Integer.parseInt(args[3]);
        long chunk = Long.parseLong(args[4]);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        AtomicBoolean finished = new AtomicBoolean();
        try (Arena arena = Arena.ofShared();
                TransferEngine engine = DemoCommand.engine(
                        "demo-target-" + ProcessHandle.current().pid(), provider, directory, lanes, chunk)) {
            MemorySegment region = HostMemory.allocate(arena, size);
            LocalBuffer buffer = engine.register(region);
            engine.publish("landing", buffer, Access.anyPeer());
            System.out.println("READY " + engine.name());
            System.out.flush();
            Thread.ofPlatform().daemon().start(() -> {
                try {
                    while (in.readLine() != null) {
                        // the initiator says nothing; EOF means it is gone
                    }
                } catch (IOException e) {
                    // same as EOF
                }
                if (!finished.get()) {
                    System.err.println("demo target: the initiator went away; exiting");
                    Runtime.getRuntime().halt(3);
                }
            });
            Notification n = engine.awaitTag(TAG, Duration.ofSeconds(300));
            if (n == null) {
                throw new IllegalStateException("no notification from the initiator within 300 s");
            }
            System.out.println("ARRIVED " + n.checksum());
            System.out.flush();
            String verdict = "VERIFIED " + size;
            for (long off = 0; off < size; off += 8) {
                if (region.get(ValueLayout.JAVA_LONG_UNALIGNED, off) != word(off)) {
                    verdict = "MISMATCH " + off;
                    break;
                }
            }
            finished.set(true);
            System.out.println(verdict);
            System.out.flush();
            // keep the engine up until the initiator is done with us
            while (in.readLine() != null) {
                // drain
            }
        }
    }
}
