package io.rdma4j.perf.soak;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.engine.spi.FaultInjectingBackend;
import io.rdma4j.libfabric.Libfabric;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A short soak, real processes and real transports: every kind of fault comes at least once (the soak goes on until it
 * has), no transfer hangs, no byte is corrupt, and every interrupted checkpoint leaves no manifest and the previous
 * version intact. Counts, never times.
 */
class SoakTest {
    @Test
    // a wedge in native code (a peer killed inside a provider's critical section) must fail the run, not hang it
    @Timeout(value = 600, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
    void everyFaultComesAndNothingHangsOrCorrupts() throws Exception {
        assumeTrue(Libfabric.isAvailable(), "libfabric is not installed: " + Libfabric.unavailabilityCause());
        SoakRun.Result r = new SoakRun(Duration.ofSeconds(20), 42, null).run();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        Soak.report(r, new PrintStream(out, true, StandardCharsets.UTF_8));
        String said = out.toString(StandardCharsets.UTF_8);
        for (Chaos.Fault f : Chaos.Fault.values()) {
            assertTrue(r.chaos().injected(f) > 0, f.label + " never injected:\n" + said);
        }
        assertTrue(
                r.backends().stream()
                                .mapToLong(FaultInjectingBackend::injectedFailures)
                                .sum()
                        > 0,
                said);
        assertTrue(r.checkpoints().killed() > 0, said);
        assertEquals(r.checkpoints().killed(), r.checkpoints().manifestsAbsent(), said);
        assertEquals(r.checkpoints().killed(), r.checkpoints().previousIntact(), said);
        assertTrue(r.checkpoints().anomalies().isEmpty(), said);
        assertTrue(r.chaos().errors().isEmpty(), said);
        assertTrue(r.ledger().completed() > 0 && r.ledger().verifiedBytes() > 0, said);
        assertEquals(0, r.ledger().hung(), said);
        assertEquals(0, r.ledger().corruptBytes(), said);
    }
}
