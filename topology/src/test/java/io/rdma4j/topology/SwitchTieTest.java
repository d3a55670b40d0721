package io.rdma4j.topology;

import static io.rdma4j.topology.Shapes.bdf;
import static io.rdma4j.topology.Shapes.best;
import static io.rdma4j.topology.Shapes.set;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Ties below one PCIe switch (trap 5): GPUs and NICs that are equally close share the load, but a NIC that shares a
 * lower bridge with the GPU wins alone, even where counting bridges would call it a tie
 * ({@code asymmetric-switch.xml}).
 */
class SwitchTieTest {
    private final Topology t = Shapes.xml("asymmetric-switch.xml");

    @Test
    void ownNicOnTheSameDownstreamPortWinsAloneThoughBothArePxbAtEqualBridgeCounts() {
        List<Ranked<PciDevice>> r = t.rankNics("0000:42:00.0");
        assertEquals(bdf("0000:45:00.0"), r.get(0).address());
        assertEquals(bdf("0000:48:00.0"), r.get(1).address());
        assertEquals(Level.PXB, r.get(0).level());
        assertEquals(Level.PXB, r.get(1).level());
        assertEquals(r.get(0).hops(), r.get(1).hops(), "the shape this test is about: equal bridge counts");
        assertTrue(r.get(0).climb() < r.get(1).climb(), r.toString());
        assertEquals(set("0000:45:00.0"), best(t, "0000:42:00.0"));
        assertEquals(1, r.get(1).tieGroup());
    }

    @Test
    void gpuBehindItsOwnBridgeAlsoGetsOnlyTheNicOnItsPort() {
        List<Ranked<PciDevice>> r = t.rankNics("0000:47:00.0");
        assertEquals(set("0000:48:00.0"), best(t, "0000:47:00.0"));
        assertEquals(Level.PXB, r.get(0).level());
        assertEquals(Level.PXB, r.get(1).level());
        assertEquals(bdf("0000:45:00.0"), r.get(1).address());
    }

    @Test
    void twoGpusAndTwoNicsOnOneBridgeStillTie() {
        for (String gpu : List.of("0000:02:00.0", "0000:04:00.0")) {
            List<Ranked<PciDevice>> r = t.rankNics(gpu);
            assertEquals(set("0000:03:00.0", "0000:05:00.0"), best(t, gpu), gpu);
            assertEquals(Level.PIX, r.get(0).level());
            assertEquals(r.get(0).climb(), r.get(1).climb());
            assertEquals(1, r.get(2).tieGroup(), gpu + ": the NUMA 1 NICs come after the tie");
            assertEquals(Level.SYS, r.get(2).level());
        }
    }

    @Test
    void hostMemoryRanksByNodeAndDepthNotByAnyGpusSwitch() {
        List<Ranked<PciDevice>> r = t.rankNics("numa:1");
        assertEquals(bdf("0000:48:00.0"), r.get(0).address(), "fewest bridges below the root first");
        assertEquals(Level.NODE, r.get(0).level());
        assertEquals(0, r.get(0).climb());
        assertEquals(set("0000:03:00.0", "0000:05:00.0"), best(t, "numa:0"));
    }
}
