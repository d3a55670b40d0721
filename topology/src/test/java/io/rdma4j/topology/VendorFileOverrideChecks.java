package io.rdma4j.topology;

import static io.rdma4j.topology.Shapes.bdf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A vendor file over a live scan, as NCCL_TOPO_FILE is used on AWS: the VM's sysfs (written here in the kernel's
 * layout, with the ids the files name) hides what the file states. Checked with AWS's files
 * ({@link VendorFileOverrideCaptureTest}) and with files written here with their facts
 * ({@link VendorFileOverrideTest}).
 */
abstract class VendorFileOverrideChecks {
    /** g5.48xlarge's topology file. */
    abstract Path g5File();

    /** p5.48xlarge's topology file. */
    abstract Path p5File();

    /** p4d.24xlarge's topology file. */
    abstract Path p4dFile();

    private static final String ALL_CPUS = "0-191";

    /** g5.48xlarge: 8 A10G at 00:16.0-00:1d.0 and one EFA at 00:15.0, flat on one virtual root bus, locality hidden. */
    static FakeSysfs g5(Path root) {
        FakeSysfs fs = new FakeSysfs(root).node(0, "0-95", "10 20").node(1, "96-191", "20 10");
        for (String dev : List.of("16", "17", "18", "19", "1a", "1b", "1c", "1d")) {
            fs.pci(
                    "pci0000:00",
                    List.of(),
                    "0000:00:" + dev + ".0",
                    0x030200,
                    0x10de,
                    0x2237,
                    -1,
                    ALL_CPUS,
                    "16.0 GT/s PCIe",
                    16);
        }
        fs.pci("pci0000:00", List.of(), "0000:00:15.0", 0x020000, 0x1d0f, 0xefa0, -1, ALL_CPUS, "8.0 GT/s PCIe", 16);
        fs.ib("rdmap0s21", "0000:00:15.0", "100 Gb/sec (4X EDR)", "eth1");
        return fs;
    }

    @TempDir
    Path tmp;

    @Test
    void g5FilePutsGpus4To7AtNodeAndGpus0To3AtSysFromTheEfa() {
        Path file = g5File();
        Topology t = Topology.builder()
                .fsroot(g5(tmp).root)
                .ncclXml(file)
                .nicFilter("")
                .build();
        List<String> gpus = List.of("16", "17", "18", "19", "1a", "1b", "1c", "1d");
        for (int i = 0; i < gpus.size(); i++) {
            String gpu = "0000:00:" + gpus.get(i) + ".0";
            List<Ranked<PciDevice>> r = t.rankNics(gpu);
            assertEquals(1, r.size(), gpu);
            assertEquals(bdf("0000:00:15.0"), r.get(0).address());
            assertEquals(i >= 4 ? Level.NODE : Level.SYS, r.get(0).level(), "GPU " + i + " at " + gpu);
        }
        PciDevice efa = t.device("0000:00:15.0").orElseThrow();
        assertEquals(1, efa.numaNode());
        assertEquals(NumaSource.TOPOLOGY_FILE, efa.numaSource());
        assertEquals(List.of("rdmap0s21"), efa.names());
        assertEquals(List.of("eth1"), efa.netdevs());
        assertTrue(t.source().contains("+nccl-xml:"), t.source());
    }

    /**
     * p5.48xlarge switches as the VM shows them: each H100 and its 4 EFAs below one switch (45, 56 on NUMA 0; ab on
     * NUMA 1), each endpoint on its own downstream port.
     */
    private static FakeSysfs p5(Path root) {
        FakeSysfs fs = new FakeSysfs(root).node(0, "0-95", "10 32").node(1, "96-191", "32 10");
        record Sw(String rootBus, String sw, String dsp, List<String> efas, String gpu, int numa) {}
        List<Sw> switches = List.of(
                new Sw("44", "45", "46", List.of("4f", "50", "51", "52"), "53", 0),
                new Sw("55", "56", "57", List.of("60", "61", "62", "63"), "64", 0),
                new Sw("aa", "ab", "ac", List.of("b5", "b6", "b7", "b8"), "b9", 1),
                new Sw("bb", "bc", "bd", List.of("c6", "c7", "c8", "c9"), "ca", 1));
        int efaIndex = 0;
        for (Sw s : switches) {
            String hb = "pci0000:" + s.rootBus;
            String rp = "0000:" + s.rootBus + ":01.0";
            String up = "0000:" + s.sw + ":00.0";
            String cpus = s.numa == 0 ? "0-95" : "96-191";
            int port = 1;
            for (String efa : s.efas) {
                String dsp = String.format("0000:%s:%02x.0", s.dsp, port++);
                String bdf = "0000:" + efa + ":00.0";
                fs.pci(hb, List.of(rp, up, dsp), bdf, 0x020000, 0x1d0f, 0xefa1, s.numa, cpus, "32.0 GT/s PCIe", 16);
                fs.ib("rdmap" + efaIndex++, bdf, "100 Gb/sec (4X EDR)", "eth" + efaIndex);
            }
            String dsp = String.format("0000:%s:%02x.0", s.dsp, port);
            fs.pci(
                    hb,
                    List.of(rp, up, dsp),
                    "0000:" + s.gpu + ":00.0",
                    0x030200,
                    0x10de,
                    0x2330,
                    s.numa,
                    cpus,
                    "32.0 GT/s PCIe",
                    16);
        }
        return fs;
    }

    @Test
    void p5FileGivesEachH100ItsFourEfaLanesAsOneTie() {
        Path file = p5File();
        Topology t = Topology.builder()
                .fsroot(p5(tmp).root)
                .ncclXml(file)
                .nicFilter("")
                .build();
        record Expect(String gpu, List<String> efas) {}
        for (Expect e : List.of(
                new Expect("53", List.of("4f", "50", "51", "52")),
                new Expect("64", List.of("60", "61", "62", "63")),
                new Expect("b9", List.of("b5", "b6", "b7", "b8")),
                new Expect("ca", List.of("c6", "c7", "c8", "c9")))) {
            List<Ranked<PciDevice>> r = t.rankNics("0000:" + e.gpu + ":00.0");
            Set<PciAddress> best = r.stream()
                    .filter(x -> x.tieGroup() == 0)
                    .map(Ranked::address)
                    .collect(Collectors.toSet());
            assertEquals(e.efas.stream().map(b -> bdf("0000:" + b + ":00.0")).collect(Collectors.toSet()), best, e.gpu);
            assertTrue(r.subList(0, 4).stream().allMatch(x -> x.level() == Level.PXB), e.gpu);
            assertTrue(r.get(4).level().compareTo(Level.PXB) > 0, e.gpu);
        }
        // the GPU the file omits is re-rooted under the file's switch 45:00.0 with its EFAs
        PciDevice gpu = t.device("0000:53:00.0").orElseThrow();
        assertEquals(bdf("0000:45:00.0"), gpu.path().get(0).address());
        assertEquals(t.device("0000:4f:00.0").orElseThrow().hostBridge(), gpu.hostBridge());
        assertEquals(Level.NODE, t.rankNics("0000:53:00.0").get(4).level());
        assertEquals(Level.SYS, t.rankNics("0000:53:00.0").get(r(t)).level());
        assertEquals(16, t.nics().size(), "only the EFAs this machine has");
    }

    @Test
    void fileForAnotherMachineTypeInventsNoNic() {
        Topology t = Topology.builder()
                .fsroot(g5(tmp).root)
                .ncclXml(p4dFile())
                .nicFilter("")
                .build();
        assertEquals(
                List.of(bdf("0000:00:15.0")),
                t.nics().stream().map(PciDevice::address).toList());
        assertTrue(t.device("0000:10:1b.0").isEmpty());
        assertTrue(
                t.warnings().stream().anyMatch(w -> w.contains("12 device(s) this machine does not have")),
                t.warnings().toString());
    }

    private static int r(Topology t) {
        return t.rankNics("0000:53:00.0").size() - 1;
    }

    @Test
    void fileNumaNodeOverridesAContradictingSysfsOneWithAWarning() {
        FakeSysfs fs = new FakeSysfs(tmp).node(0, "0-95", "10 20").node(1, "96-191", "20 10");
        fs.pci("pci0000:00", List.of(), "0000:00:15.0", 0x020000, 0x1d0f, 0xefa0, 0, "0-95", null, 0);
        Topology t = Topology.builder()
                .fsroot(fs.root)
                .ncclXml(g5File())
                .nicFilter("")
                .build();
        assertEquals(1, t.device("0000:00:15.0").orElseThrow().numaNode());
        assertTrue(
                t.warnings().stream().anyMatch(w -> w.contains("0000:00:15.0") && w.contains("using the file")),
                t.warnings().toString());
    }
}
