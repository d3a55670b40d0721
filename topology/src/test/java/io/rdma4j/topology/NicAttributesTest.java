package io.rdma4j.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The one rule by which every engine backend names a lane's PCI function, NUMA node and speed. */
class NicAttributesTest {
    @TempDir
    Path tmp;

    @Test
    void readsVerbsDevicesNetworkInterfacesAndUnknownNames() {
        SysfsShapesTest.machine(tmp);
        Topology t = Topology.builder().fsroot(tmp).nicFilter("").build();
        assertEquals(new NicAttributes("mlx5_0", "0000:04:00.0", 0, 400), t.nicAttributes("mlx5_0"));
        assertEquals(new NicAttributes("mlx5_2", "0000:81:00.0", 1, 100), t.nicAttributes("mlx5_2"));
        assertEquals(
                new NicAttributes("ens3", "0000:08:00.0", 0, NicAttributes.UNKNOWN_RATE_GBPS), t.nicAttributes("ens3"));
        assertEquals(NicAttributes.unknown("lo"), t.nicAttributes("lo"));
    }

    @Test
    void aMachineWithOneNodePutsFunctionlessNicsOnIt() {
        new FakeSysfs(tmp).node(0, "0-3", "10");
        Topology t = Topology.builder().fsroot(tmp).nicFilter("").build();
        assertEquals(new NicAttributes("rxe0", null, 0, NicAttributes.UNKNOWN_RATE_GBPS), t.nicAttributes("rxe0"));
    }

    @Test
    void neverPutsAFiveDigitPciDomainOnTheWire() {
        FakeSysfs.qemuGuestWithFiveDigitDomain(tmp);
        Topology t = Topology.builder().fsroot(tmp).nicFilter("").build();
        for (RdmaDevice d : t.rdmaDevices()) {
            NicAttributes a = t.nicAttributes(d.name());
            if (a.pciAddress() != null) {
                assertEquals(12, a.pciAddress().length(), a.toString());
            }
        }
    }
}
