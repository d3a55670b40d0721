package io.rdma4j.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** This machine: whatever it has, the scan completes and its answers are consistent. CI machines have no GPU or NIC. */
class LiveMachineTest {
    @Test
    void liveScanCompletesWithOneAffinityEntryPerComputeDevice() {
        Topology t = Topology.builder().live().nicFilter("").build();
        assertEquals("sysfs", t.source());
        assertFalse(t.numaNodes().isEmpty());
        assertTrue(t.numaNodes().stream().anyMatch(NumaNode::hasCpus));
        assertEquals(t.computeDevices().size(), t.affinity().size());
        if (t.computeDevices().isEmpty()) {
            assertTrue(t.affinity().isEmpty());
        }
        if (t.devices(DeviceKind.NIC).isEmpty()) {
            assertTrue(t.rankNics(Location.numa(t.numaNodes().get(0).id())).isEmpty());
        }
        t.devices()
                .forEach(d ->
                        assertEquals(d.address(), PciAddress.parse(d.address().toString())));
    }

    @Test
    void liveSummaryFromOshiMatchesTheJvm() {
        SystemSummary s = SystemSummary.live();
        assertTrue(Runtime.getRuntime().availableProcessors() <= s.logicalCpus());
        assertTrue(s.physicalCores() > 0 && s.physicalCores() <= s.logicalCpus());
        assertTrue(s.packages() > 0);
        assertTrue(s.memoryBytes() > Runtime.getRuntime().maxMemory() / 4);
        assertEquals("oshi", s.source());
    }

    @Test
    void vendorFileFromTheEnvironmentOverridesALiveScan() {
        java.nio.file.Path file = Shapes.file("ndv4.xml");
        Topology t = Topology.builder()
                .live()
                .environment(java.util.Map.of(Topology.TOPO_FILE_ENV, file.toString()))
                .nicFilter("")
                .build();
        assertEquals("sysfs+nccl-xml:" + file, t.source());
        Topology plain = Topology.builder()
                .live()
                .environment(java.util.Map.of())
                .nicFilter("")
                .build();
        assertEquals("sysfs", plain.source());
        // the override never adds devices: on anything but an NDv4 the file's GPUs and NICs are not invented
        assertEquals(
                plain.devices().stream().map(PciDevice::address).toList(),
                t.devices().stream().map(PciDevice::address).toList());
        if (plain.device("0103:00:00.0").isEmpty()) {
            assertTrue(
                    t.warnings().stream().anyMatch(w -> w.contains("device(s) this machine does not have")),
                    t.warnings().toString());
        }
    }

    @Test
    void procSummaryOfThisMachineAgreesWithOshi() {
        SystemSummary proc = SystemSummary.fromProc(java.nio.file.Path.of("/"));
        SystemSummary oshi = SystemSummary.live();
        assertEquals(oshi.logicalCpus(), proc.logicalCpus());
        assertTrue(Math.abs(oshi.memoryBytes() - proc.memoryBytes()) < 64L << 20, oshi + " vs " + proc);
    }
}
