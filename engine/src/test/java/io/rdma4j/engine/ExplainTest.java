package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.ffi.Extended;
import io.rdma4j.topology.Fixtures;
import io.rdma4j.topology.Shapes;
import io.rdma4j.topology.Topology;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Offline plans on the machines of {@code ../shared/topology/README.md}: each behaviour runs on a topology file written
 * for the tests ({@link Shapes}, from the topology module's test-jar) and, in the extended suite, on the real capture
 * it reproduces.
 */
class ExplainTest {
    @TempDir
    static Path tmp;

    private static Topology fixture(String name) {
        return Explain.topology(Shapes.copy(name, tmp));
    }

    private static Topology capture(String rel) {
        return Explain.topology(Fixtures.file(rel));
    }

    @Test
    void p4dGpuWritesThroughItsOwnEfaToThePeerGpusEfa() {
        gpuWritesThroughItsOwnEfa(fixture(Shapes.P4D));
    }

    @Test
    @Extended
    void p4dGpuWritesThroughItsOwnEfaToThePeerGpusEfaOnTheCapture() {
        gpuWritesThroughItsOwnEfa(capture(Fixtures.P4D_CAPTURE));
    }

    /** GPU 10:1c's own EFA is 10:1b; GPU 90:1c's is 90:1b, on the other socket: one lane between the two. */
    private static void gpuWritesThroughItsOwnEfa(Topology p4d) {
        Plan plan = Explain.plan(p4d, "0000:10:1c.0", p4d, "0000:90:1c.0", 1L << 30, 1 << 20, 128 << 10);
        assertEquals(1, plan.lanes().size(), plan.toText());
        PlanLane l = plan.lanes().getFirst();
        assertEquals("0000:10:1b.0", l.localNic());
        assertEquals("0000:90:1b.0", l.remoteNic());
        assertEquals("PIX", l.localLevel());
        assertEquals("PIX", l.remoteLevel());
        assertEquals(1L << 30, l.bytes());
        assertEquals(1024, l.chunks());
    }

    @Test
    void ndv4GroupsStripeOverBothTiedNics() {
        stripesOverBothTiedNics(fixture(Shapes.NDV4));
    }

    @Test
    @Extended
    void ndv4GroupsStripeOverBothTiedNicsOnTheCapture() {
        stripesOverBothTiedNics(capture(Fixtures.NDV4_CAPTURE));
    }

    /** GPU 0003 ties NICs 0103/0104 behind its switch, GPU 0001 ties 0101/0102: two lanes, bytes split between them. */
    private static void stripesOverBothTiedNics(Topology ndv4) {
        Plan plan = Explain.plan(ndv4, "0003:00:00.0", ndv4, "0001:00:00.0", 64L << 20, 1 << 20, 128 << 10);
        assertEquals(2, plan.lanes().size(), plan.toText());
        List<String> local =
                plan.lanes().stream().map(PlanLane::localNic).sorted().toList();
        assertEquals(List.of("0103:00:00.0", "0104:00:00.0"), local);
        List<String> remote =
                plan.lanes().stream().map(PlanLane::remoteNic).sorted().toList();
        assertEquals(List.of("0101:00:00.0", "0102:00:00.0"), remote);
        assertEquals(64L << 20, plan.lanes().stream().mapToLong(PlanLane::bytes).sum());
        String json = plan.toJson();
        assertTrue(json.startsWith("{\"lanes\": [{\"localNic\": \"01"), json);
    }

    @Test
    void aMachineWithoutRdmaNicGetsNoInventedLane() {
        getsNoInventedLane(fixture(Shapes.NCV4), fixture(Shapes.NDV4));
    }

    @Test
    @Extended
    void aMachineWithoutRdmaNicGetsNoInventedLaneOnTheCaptures() {
        getsNoInventedLane(capture(Fixtures.NCV4_CAPTURE), capture(Fixtures.NDV4_CAPTURE));
    }

    private static void getsNoInventedLane(Topology ncv4, Topology ndv4) {
        String gpu = ncv4.computeDevices().getFirst().address().toString();
        Plan plan = Explain.plan(ncv4, gpu, ndv4, "0001:00:00.0", 1 << 20, 1 << 20, 128 << 10);
        assertTrue(plan.lanes().isEmpty(), plan.toText());
        assertTrue(plan.reason().contains("source topology") && plan.reason().contains("no RDMA NIC"), plan.reason());
        assertEquals("{\"lanes\": [], \"reason\": " + Plan.quote(plan.reason()) + "}", plan.toJson());
    }

    @Test
    void smallTransfersUseOneLaneEvenWhenSeveralTie() {
        usesOneLaneBelowTheThreshold(fixture(Shapes.NDV4));
    }

    @Test
    @Extended
    void smallTransfersUseOneLaneEvenWhenSeveralTieOnTheCapture() {
        usesOneLaneBelowTheThreshold(capture(Fixtures.NDV4_CAPTURE));
    }

    private static void usesOneLaneBelowTheThreshold(Topology ndv4) {
        Plan plan = Explain.plan(ndv4, "0003:00:00.0", ndv4, "0001:00:00.0", 4096, 1 << 20, 128 << 10);
        assertEquals(1, plan.lanes().size());
        assertTrue(plan.reason().contains("below"), plan.reason());
    }
}
