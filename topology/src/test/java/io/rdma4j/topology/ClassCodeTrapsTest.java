package io.rdma4j.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.topology.internal.Classifier;
import io.rdma4j.topology.internal.Classifier.RdmaEvidence;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Traps 1 and 2 of the fixtures README: class codes that mean GPU, accelerator, NVSwitch or RDMA NIC, and those that do
 * not.
 */
class ClassCodeTrapsTest {
    private static DeviceKind kind(int vendor, int device, int cls, RdmaEvidence rdma) {
        return Classifier.kind(vendor, device, cls, rdma, null, false);
    }

    @Test
    void nvidia3dControllerClass0302IsAGpu() {
        assertEquals(DeviceKind.GPU, kind(0x10de, 0x20b0, 0x030200, RdmaEvidence.NO));
        assertEquals(DeviceKind.GPU, kind(0x10de, 0x2204, 0x030000, RdmaEvidence.NO), "a GeForce in VGA mode");
    }

    @Test
    void vgaClass0300FromBmcChipsIsNotAGpu() {
        assertEquals(DeviceKind.OTHER, kind(0x1a03, 0x2000, 0x030000, RdmaEvidence.NO), "ASPEED");
        assertEquals(DeviceKind.OTHER, kind(0x102b, 0x0532, 0x030000, RdmaEvidence.NO), "Matrox G200eW");
        assertEquals(DeviceKind.OTHER, kind(0x1002, 0x515e, 0x030000, RdmaEvidence.NO), "ATI ES1000");
        assertEquals(DeviceKind.OTHER, kind(0x1013, 0x00b8, 0x030000, RdmaEvidence.NO), "QEMU Cirrus");
    }

    @Test
    void mi250DisplayClass0380IsAGpu() {
        assertEquals(DeviceKind.GPU, kind(0x1002, 0x740c, 0x038000, RdmaEvidence.NO));
    }

    @Test
    void processingAcceleratorClass1200IsAGpuFromAmdAndAnAcceleratorOtherwise() {
        assertEquals(DeviceKind.GPU, kind(0x1002, 0x74a1, 0x120000, RdmaEvidence.NO), "MI300X");
        assertEquals(DeviceKind.GPU, kind(0x1002, 0x74a0, 0x120000, RdmaEvidence.NO), "MI300A");
        assertEquals(DeviceKind.GPU, kind(0x1002, 0x75a3, 0x120000, RdmaEvidence.NO), "MI355X");
        assertEquals(DeviceKind.ACCELERATOR, kind(0x1da3, 0x1020, 0x120000, RdmaEvidence.NO), "Habana Gaudi2");
    }

    @Test
    void coprocessorClass0b40IsAnAccelerator() {
        assertEquals(DeviceKind.ACCELERATOR, kind(0x8086, 0x225c, 0x0b4000, RdmaEvidence.NO));
    }

    @Test
    void nvSwitchClass0680IsNeitherGpuNorNic() {
        assertEquals(DeviceKind.NVSWITCH, kind(0x10de, 0x1ac2, 0x068000, RdmaEvidence.NO));
        assertEquals(
                DeviceKind.NVSWITCH, Classifier.kind(-1, -1, -1, RdmaEvidence.NO, "NVSwitch", false), "hwloc subtype");
        assertEquals(DeviceKind.OTHER, kind(0x8086, 0x1234, 0x068000, RdmaEvidence.NO));
    }

    @Test
    void infinibandClasses0207And0c06AreNicsByClass() {
        assertEquals(DeviceKind.NIC, kind(0x15b3, 0x1021, 0x020700, RdmaEvidence.NO));
        assertEquals(DeviceKind.NIC, kind(0x1077, 0x7322, 0x0c0600, RdmaEvidence.NO));
    }

    @Test
    void connectX3Class0280AndRoceClass0200NeedAnRdmaCapability() {
        assertEquals(DeviceKind.NIC, kind(0x15b3, 0x1003, 0x028000, RdmaEvidence.NO), "Mellanox is RDMA by vendor");
        assertEquals(DeviceKind.NIC, kind(0x15b3, 0x101d, 0x020000, RdmaEvidence.NO));
        assertEquals(DeviceKind.NIC, kind(0x14e4, 0x1750, 0x020000, RdmaEvidence.YES), "Broadcom with bnxt_re");
        assertEquals(DeviceKind.OTHER, kind(0x14e4, 0x1639, 0x020000, RdmaEvidence.NO), "Broadcom without");
        assertEquals(DeviceKind.OTHER, kind(0x8086, 0x1521, 0x020000, RdmaEvidence.NO), "Intel i350");
    }

    @Test
    void efaIsAnRdmaNicAndEnaIsNot() {
        for (int id : List.of(0xefa0, 0xefa1, 0xefa2)) {
            assertEquals(DeviceKind.NIC, kind(0x1d0f, id, 0x020000, RdmaEvidence.NO), Integer.toHexString(id));
        }
        assertEquals(DeviceKind.OTHER, kind(0x1d0f, 0xec20, 0x020000, RdmaEvidence.NO), "ENA");
    }

    @Test
    void slingshotCassiniIsAnHpcNic() {
        assertEquals(DeviceKind.NIC, kind(0x17db, 0x0501, 0x020000, RdmaEvidence.NO));
    }

    @Test
    void connectX7InternalSwitch1979IsABridge() {
        assertTrue(Classifier.isBridge(0x060400));
        assertEquals(
                DeviceKind.OTHER,
                kind(0x15b3, 0x1979, 0x020000, RdmaEvidence.NO),
                "even if it reported a network class");
    }

    @Test
    void nvmeClass0108IsNvme() {
        assertEquals(DeviceKind.NVME, kind(0x144d, 0xa80a, 0x010802, RdmaEvidence.NO));
    }

    @TempDir
    Path tmp;

    @Test
    void nicWithoutAnInfinibandEntryIsStillANicButNotVerbs() {
        // the driver is not loaded (or the capture skipped /sys/class/infiniband): vendor ids still tell
        FakeSysfs fs = new FakeSysfs(tmp).node(0, "0-3", "10");
        fs.pci(
                "pci0000:00",
                List.of("0000:00:01.0"),
                "0000:01:00.0",
                0x020000,
                0x15b3,
                0x101d,
                0,
                "0-3",
                "32.0 GT/s PCIe",
                16);
        fs.pci(
                "pci0000:00",
                List.of("0000:00:02.0"),
                "0000:02:00.0",
                0x020000,
                0x1d0f,
                0xefa1,
                0,
                "0-3",
                "32.0 GT/s PCIe",
                16);
        Topology t = Topology.builder().fsroot(tmp).nicFilter("").build();
        assertEquals(2, t.nics().size());
        assertTrue(t.nics().stream().noneMatch(PciDevice::verbs));
        assertFalse(t.nics().get(0).link().gbps() == 0);
    }

    @Test
    void everyClassCodeTrapOnOneScannedMachineIsSortedIntoItsKind() {
        // one function of each trap class on a scanned tree, so the scanner's own class and id reading is covered too
        FakeSysfs fs = new FakeSysfs(tmp).node(0, "0-7", "10");
        record Fn(String bdf, int cls, int vendor, int device, DeviceKind expected, String what) {}
        List<Fn> fns = List.of(
                new Fn("0000:01:00.0", 0x030200, 0x10de, 0x2330, DeviceKind.GPU, "H100, 3D controller"),
                new Fn("0000:02:00.0", 0x038000, 0x1002, 0x740c, DeviceKind.GPU, "MI250, display controller"),
                new Fn("0000:03:00.0", 0x120000, 0x1002, 0x74a1, DeviceKind.GPU, "MI300X, processing accelerator"),
                new Fn("0000:04:00.0", 0x120000, 0x1da3, 0x1020, DeviceKind.ACCELERATOR, "Gaudi2"),
                new Fn("0000:05:00.0", 0x0b4000, 0x8086, 0x225c, DeviceKind.ACCELERATOR, "Xeon Phi, co-processor"),
                new Fn("0000:06:00.0", 0x068000, 0x10de, 0x22a3, DeviceKind.NVSWITCH, "NVSwitch"),
                new Fn("0000:07:00.0", 0x030000, 0x1a03, 0x2000, DeviceKind.OTHER, "ASPEED BMC video"),
                new Fn("0000:08:00.0", 0x020700, 0x15b3, 0x1021, DeviceKind.NIC, "ConnectX-7, InfiniBand class"),
                new Fn("0000:09:00.0", 0x0c0600, 0x1077, 0x7322, DeviceKind.NIC, "QLogic, older InfiniBand class"),
                new Fn("0000:0a:00.0", 0x028000, 0x15b3, 0x1003, DeviceKind.NIC, "ConnectX-3, class 0x0280"),
                new Fn("0000:0b:00.0", 0x020000, 0x1d0f, 0xefa1, DeviceKind.NIC, "EFA, Ethernet class"),
                new Fn("0000:0c:00.0", 0x020000, 0x17db, 0x0501, DeviceKind.NIC, "Slingshot, Ethernet class"),
                new Fn("0000:0d:00.0", 0x020000, 0x1d0f, 0xec20, DeviceKind.OTHER, "ENA, Ethernet only"));
        int port = 1;
        for (Fn f : fns) {
            fs.pci(
                    "pci0000:00",
                    List.of(String.format("0000:00:%02x.0", port++)),
                    f.bdf,
                    f.cls,
                    f.vendor,
                    f.device,
                    0,
                    "0-7",
                    "16.0 GT/s PCIe",
                    16);
        }
        // a ConnectX-7's internal switch (15b3:1979) is bridges above its NIC function, never a device of its own
        fs.bridge("pci0000:00", List.of("0000:00:1f.0"), "0000:0e:00.0", 0x15b3, 0x1979, 0, "0-7");
        fs.pci(
                "pci0000:00",
                List.of("0000:00:1f.0", "0000:0e:00.0"),
                "0000:0f:00.0",
                0x020700,
                0x15b3,
                0x1021,
                0,
                "0-7",
                "32.0 GT/s PCIe",
                16);
        Topology t = Topology.builder().fsroot(tmp).nicFilter("").build();
        for (Fn f : fns) {
            PciDevice d = t.device(f.bdf).orElseThrow();
            assertEquals(f.expected, d.kind(), f.what);
            assertEquals(f.cls, d.classCode(), f.what);
        }
        assertTrue(t.device("0000:0e:00.0").isEmpty());
        PciDevice cx7 = t.device("0000:0f:00.0").orElseThrow();
        assertEquals(DeviceKind.NIC, cx7.kind());
        assertEquals(0x1979, cx7.path().get(1).device());
        assertEquals(
                3,
                t.computeDevices().stream()
                        .filter(d -> d.kind() == DeviceKind.GPU)
                        .count());
    }
}
