package io.rdma4j.topology;

import static io.rdma4j.topology.Shapes.bdf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

/**
 * What AMD's RCCL topology files must yield (MI300X with ConnectX-7, the Azure MI300X VM, MI300A with HPE Slingshot),
 * checked on the published files ({@link RcclTopologyFilesTest}) and on files written here with the same facts
 * ({@link RcclShapesTest}).
 */
abstract class RcclTopologyChecks {
    abstract Topology mi300x();

    abstract Topology mi300xVm();

    abstract Topology mi300a();

    @Test
    void mi300xClass1200IsAGpu() {
        List<PciDevice> gpus = mi300x().devices(DeviceKind.GPU);
        assertEquals(8, gpus.size());
        assertTrue(gpus.stream().allMatch(g -> g.classCode() == 0x120000 && g.vendor() == 0x1002));
    }

    @Test
    void eachMi300xOwnsOneConnectX7AtPxb() {
        Map<String, String> pairs =
                Map.of("0c", "07", "15", "10", "1e", "19", "69", "64", "9f", "9a", "af", "aa", "bf", "ba", "df", "da");
        pairs.forEach((gpu, nic) -> {
            List<Ranked<PciDevice>> r = mi300x().rankNics("0000:" + gpu + ":00.0");
            assertEquals(bdf("0000:" + nic + ":00.0"), r.get(0).address(), gpu);
            assertEquals(Level.PXB, r.get(0).level(), gpu);
            assertEquals(0, r.get(0).tieGroup());
            assertEquals(1, r.get(1).tieGroup(), gpu + ": the best NIC must be alone in its group");
            int numa = Set.of("0c", "15", "1e", "69").contains(gpu) ? 0 : 1;
            assertEquals(numa, r.get(0).target().numaNode(), gpu);
        });
    }

    @Test
    void connectX7InternalSwitch15b3_1979IsABridgeNotANic() {
        assertEquals(8, mi300x().nics().size());
        assertTrue(mi300x().nics().stream().noneMatch(n -> n.deviceId() == 0x1979));
        assertTrue(mi300x().device("0000:05:00.0").isEmpty());
        PciBridge sw = mi300x().device("0000:07:00.0").orElseThrow().path().get(0);
        assertEquals(bdf("0000:05:00.0"), sw.address());
        assertEquals(0x15b3, sw.vendor());
        assertEquals(0x1979, sw.device());
        assertFalse(sw.synthetic());
    }

    @Test
    void connectX7NetNamesBecomeVerbsDevicesWithTheirRate() {
        PciDevice nic = mi300x().device("0000:07:00.0").orElseThrow();
        assertEquals(List.of("mlx5_0"), nic.names());
        assertTrue(nic.verbs());
        assertEquals(400.0, nic.lineRateGbps());
    }

    @Test
    void azureMi300xVmWithoutBridgesRanksNodeOnly() {
        Set<PciAddress> numa0Nics =
                Set.of(bdf("0010:00:00.0"), bdf("0020:00:00.0"), bdf("0030:00:00.0"), bdf("0040:00:00.0"));
        for (String gpu : List.of("0011:00:00.0", "0021:00:00.0", "0031:00:00.0", "0041:00:00.0")) {
            List<Ranked<PciDevice>> r = mi300xVm().rankNics(gpu);
            Set<PciAddress> best = r.stream()
                    .filter(x -> x.tieGroup() == 0)
                    .map(Ranked::address)
                    .collect(Collectors.toSet());
            assertEquals(numa0Nics, best, gpu);
            assertTrue(r.stream().filter(x -> x.tieGroup() == 0).allMatch(x -> x.level() == Level.NODE));
            assertTrue(
                    r.stream().noneMatch(x -> x.level().compareTo(Level.NODE) < 0),
                    "no bridges: nothing better than NODE");
            assertEquals(0, mi300xVm().device(gpu).orElseThrow().numaNode());
        }
    }

    @Test
    void mi300aGetsOneSlingshotNicPerApuOnItsNumaNodeAtNode() {
        Map<String, String> pairs = Map.of("02", "01", "42", "41", "82", "81", "c2", "c1");
        pairs.forEach((apu, nic) -> {
            List<Ranked<PciDevice>> r = mi300a().rankNics("0000:" + apu + ":00.0");
            assertEquals(bdf("0000:" + nic + ":00.0"), r.get(0).address(), apu);
            assertEquals(Level.NODE, r.get(0).level());
            assertEquals(Level.SYS, r.get(1).level());
        });
        assertEquals(4, mi300a().numaNodes().size());
    }

    @Test
    void slingshotCassiniIsANicButNotAVerbsDevice() {
        PciDevice cxi = mi300a().device("0000:81:00.0").orElseThrow();
        assertEquals(DeviceKind.NIC, cxi.kind());
        assertEquals(0x17db, cxi.vendor());
        assertFalse(cxi.verbs());
        assertEquals(List.of("cxi0"), cxi.names());
        assertTrue(mi300a().rdmaDevices().isEmpty());
    }
}
