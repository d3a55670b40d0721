package io.rdma4j.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.ffi.TestPaths;
import io.rdma4j.topology.Topology;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Offline plans on the real-machine topology fixtures in ../shared/topology (ground truth in its README). */
class ExplainTest {
    static Topology topo(String rel) {
        return Explain.topology(TestPaths.shared().resolve("topology").resolve(rel));
    }

    @Test
    void p4dGpuWritesThroughItsOwnEfaToThePeerGpusEfa() {
        Topology p4d = topo("nccl/aws-ofi-nccl/p4d-24xl-topo.xml");
        Plan plan = Explain.plan(p4d, "0000:10:1c.0", p4d, "0000:90:1c.0", 1L << 30, 1 << 20, 128 << 10);
        assertEquals(1, plan.lanes().size(), plan.toText());
        PlanLane l = plan.lanes().getFirst();
        assertEquals("0000:10:1b.0", l.localNic());
        assertEquals("0000:90:1b.0", l.remoteNic());
        assertEquals(1L << 30, l.bytes());
        assertEquals(1024, l.chunks());
    }

    @Test
    void ndv4GroupsStripeOverBothTiedNics() {
        Topology ndv4 = topo("azure/ndv4-topo.xml");
        Plan plan = Explain.plan(ndv4, "0003:00:00.0", ndv4, "0001:00:00.0", 64L << 20, 1 << 20, 128 << 10);
        assertEquals(2, plan.lanes().size(), plan.toText());
        List<String> local = plan.lanes().stream().map(PlanLane::localNic).sorted().toList();
        assertEquals(List.of("0103:00:00.0", "0104:00:00.0"), local);
        List<String> remote = plan.lanes().stream().map(PlanLane::remoteNic).sorted().toList();
        assertEquals(List.of("0101:00:00.0", "0102:00:00.0"), remote);
        assertEquals(64L << 20, plan.lanes().stream().mapToLong(PlanLane::bytes).sum());
        String json = plan.toJson();
        assertTrue(json.startsWith("{\"lanes\": [{\"localNic\": \"01"), json);
    }

    @Test
    void aMachineWithoutRdmaNicGetsNoInventedLane() {
        Topology ncv4 = topo("azure/ncv4-topo.xml");
        Topology ndv4 = topo("azure/ndv4-topo.xml");
        String gpu = ncv4.computeDevices().getFirst().address().toString();
        Plan plan = Explain.plan(ncv4, gpu, ndv4, "0001:00:00.0", 1 << 20, 1 << 20, 128 << 10);
        assertTrue(plan.lanes().isEmpty(), plan.toText());
        assertTrue(plan.reason().contains("source topology") && plan.reason().contains("no RDMA NIC"), plan.reason());
        assertEquals("{\"lanes\": [], \"reason\": " + Plan.quote(plan.reason()) + "}", plan.toJson());
    }

    @Test
    void smallTransfersUseOneLaneEvenWhenSeveralTie() {
        Topology ndv4 = topo("azure/ndv4-topo.xml");
        Plan plan = Explain.plan(ndv4, "0003:00:00.0", ndv4, "0001:00:00.0", 4096, 1 << 20, 128 << 10);
        assertEquals(1, plan.lanes().size());
        assertTrue(plan.reason().contains("below"), plan.reason());
    }
}
