package io.rdma4j.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class JitWarmupTest {
    /** What {@code Compiler.queue} printed on Temurin 25 while a JVM was starting. */
    private static final String BUSY = """
            Current compiles:\s
            C2 CompilerThread0  1773       4       java.lang.String::replace (42 bytes)
            C1 CompilerThread0  1786       3       java.lang.PublicMethods::merge (81 bytes)

            C1 compile queue:
            1787       3       java.lang.PublicMethods$Key::<init> (24 bytes)

            C2 compile queue:
            1784       4       java.lang.StringLatin1::toLowerCase (155 bytes)
            """;

    private static final String IDLE = """
            Current compiles:\s

            C1 compile queue:
            Empty

            C2 compile queue:
            Empty
            """;

    @Test
    void aListingWithCompilesRunningOrQueuedIsBusy() {
        assertFalse(JitWarmup.idle(BUSY));
        assertFalse(
                JitWarmup.idle(IDLE.replace("C2 compile queue:\nEmpty", "C2 compile queue:\n1784  4  x::y (1 bytes)")));
        assertTrue(JitWarmup.idle(IDLE));
    }

    @Test
    void thisJvmListsItsCompileQueues() {
        // HotSpot has the command; what it lists depends on what the JIT is doing right now
        String listing = JitWarmup.queueListing();
        assertNotNull(listing, "no Compiler.queue diagnostic command in this JVM");
        assertTrue(listing.contains("compile queue:"), listing);
    }

    @Test
    void aStepThatCompilesNothingRunsTwice() throws Exception {
        AtomicInteger runs = new AtomicInteger();
        int made = JitWarmup.untilQuiet(
                () -> {
                    runs.incrementAndGet();
                    Thread.sleep(200);
                },
                5_000_000_000L);
        assertEquals(runs.get(), Math.abs(made));
        assertTrue(runs.get() >= 2, "at least two runs: " + runs.get());
    }
}
