package io.rdma4j.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * {@link CloudTopologyChecks} on files written here with the published files' facts (same addresses, classes, ids and
 * NUMA nodes, nothing else), and the traps they carry.
 */
class CloudShapesTest extends CloudTopologyChecks {
    @Override
    Topology p4d() {
        return Shapes.xml("p4d.xml");
    }

    @Override
    Topology p5() {
        return Shapes.xml("p5.xml");
    }

    @Override
    Topology ndv2() {
        return Shapes.xml("ndv2.xml");
    }

    @Override
    Topology ndv4() {
        return Shapes.xml("ndv4.xml");
    }

    @Override
    Topology ncv4() {
        return Shapes.xml("ncv4.xml");
    }

    @Override
    List<Topology> ociFlattened() {
        return List.of(Shapes.xml("oci-flattened.xml"));
    }

    @Test
    void ociNicsThatSayOnlyClass0200AreRdmaNicsAndNumaIdsNeedNotBeDense() {
        Topology t = Shapes.xml("oci-flattened.xml");
        assertTrue(t.nics().stream().allMatch(n -> n.classCode() == 0x020000 && n.vendor() < 0));
        assertEquals(
                List.of(1, 3, 5, 7), t.numaNodes().stream().map(NumaNode::id).toList());
        assertEquals(3, t.device("0000:0c:00.0").orElseThrow().numaNode());
    }

    @Test
    void vmsWithOneDomainPerDeviceAndNoBridgesPlaceByNumaAlone() {
        Topology t = Shapes.xml("ndv2.xml");
        assertTrue(t.devices().stream().allMatch(d -> d.path().isEmpty()));
        assertEquals(
                9,
                t.devices().stream().map(d -> d.address().domain()).distinct().count());
        assertEquals(0x0101, t.nics().get(0).address().domain());
    }
}
