package io.rdma4j.cli;

import io.rdma4j.topology.Affinity;
import io.rdma4j.topology.DeviceKind;
import io.rdma4j.topology.Level;
import io.rdma4j.topology.NumaNode;
import io.rdma4j.topology.NvmeController;
import io.rdma4j.topology.PciDevice;
import io.rdma4j.topology.Ranked;
import io.rdma4j.topology.SystemSummary;
import io.rdma4j.topology.Topology;
import io.rdma4j.topology.TopologyJson;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.stream.Collectors;

/**
 * {@code ./rdma4j topo}: the machine summary, NUMA nodes, and a matrix in the manner of {@code nvidia-smi topo -m}
 * (rows GPUs and accelerators, columns NICs and NVMe drives, cells NCCL levels); {@code --json} prints the stable JSON
 * contract of {@link TopologyJson}.
 */
final class TopoCommand implements Command {
    private static final String USAGE = """
            usage: ./rdma4j topo [--fsroot DIR] [--nccl-xml FILE] [--nic-filter SPEC] [--json]
              --fsroot DIR      scan a captured tree whose sys/ and proc/ are under DIR (default: this machine)
              --nccl-xml FILE   an NCCL (NCCL_TOPO_FILE) or hwloc XML topology file: alone it is the source,
                                with --fsroot (or on this machine with --live) it overrides the scanned structure;
                                on this machine $RDMA4J_TOPO_FILE, when set, is applied the same way
              --live            scan this machine even when --nccl-xml is given
              --nic-filter SPEC NICs to use, NCCL_IB_HCA syntax (mlx5_0,mlx5_3 | ^mlx5_1 | =mlx5_1);
                                default $RDMA4J_IB_HCA
              --json            the JSON contract instead of the text report
            Exit status: 0 on success, 1 when a source cannot be read, 2 on bad usage.""";

    private final PrintStream out;

    TopoCommand() {
        this(System.out);
    }

    TopoCommand(PrintStream out) {
        this.out = out;
    }

    @Override
    public String name() {
        return "topo";
    }

    @Override
    public String summary() {
        return "GPU/NIC/NVMe topology and affinity matrix (--fsroot DIR, --nccl-xml FILE, --json)";
    }

    @Override
    public int run(String[] args) {
        Path fsroot = null;
        Path xml = null;
        String filter = null;
        boolean json = false;
        boolean live = false;
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            switch (a) {
                case "--json" -> json = true;
                case "--live" -> live = true;
                case "--fsroot", "--nccl-xml", "--nic-filter" -> {
                    if (i + 1 >= args.length) {
                        System.err.println("rdma4j topo: " + a + " needs a value\n" + USAGE);
                        return 2;
                    }
                    String v = args[++i];
                    switch (a) {
                        case "--fsroot" -> fsroot = Path.of(v);
                        case "--nccl-xml" -> xml = Path.of(v);
                        default -> filter = v;
                    }
                }
                case "-h", "--help", "help" -> {
                    out.println(USAGE);
                    return 0;
                }
                default -> {
                    System.err.println("rdma4j topo: unknown option '" + a + "'\n" + USAGE);
                    return 2;
                }
            }
        }
        if (fsroot != null && live) {
            System.err.println("rdma4j topo: --fsroot and --live exclude each other\n" + USAGE);
            return 2;
        }
        Topology.Builder b = Topology.builder();
        if (fsroot != null) {
            b.fsroot(fsroot);
        } else if (live || xml == null) {
            b.live();
        }
        if (xml != null) {
            b.ncclXml(xml);
        }
        if (filter != null) {
            b.nicFilter(filter);
        }
        Topology t = b.build();
        SystemSummary summary = null;
        if (fsroot != null) {
            summary = Files.isDirectory(fsroot.resolve("proc")) ? SystemSummary.fromProc(fsroot) : null;
        } else if (live || xml == null) {
            summary = SystemSummary.live();
        }
        if (json) {
            out.print(TopologyJson.write(t, summary));
        } else {
            report(t, summary);
        }
        return 0;
    }

    private static String gib(long bytes) {
        return String.format(Locale.ROOT, "%.1f GiB", bytes / (1024.0 * 1024 * 1024));
    }

    private static String cpus(List<Integer> cpus) {
        StringBuilder sb = new StringBuilder();
        int i = 0;
        while (i < cpus.size()) {
            int j = i;
            while (j + 1 < cpus.size() && cpus.get(j + 1) == cpus.get(j) + 1) {
                j++;
            }
            if (!sb.isEmpty()) {
                sb.append(',');
            }
            sb.append(cpus.get(i));
            if (j > i) {
                sb.append('-').append(cpus.get(j));
            }
            i = j + 1;
        }
        return sb.isEmpty() ? "none" : sb.toString();
    }

    private void report(Topology t, SystemSummary s) {
        out.println("source: " + t.source());
        if (s != null) {
            out.printf(
                    Locale.ROOT,
                    "machine: %s; %d package(s), %d cores, %d CPUs, %s memory%n",
                    s.cpuModel().isEmpty() ? "unknown CPU" : s.cpuModel(),
                    s.packages(),
                    s.physicalCores(),
                    s.logicalCpus(),
                    gib(s.memoryBytes()));
        }
        out.println();
        out.println("NUMA nodes:");
        for (NumaNode n : t.numaNodes()) {
            out.printf(
                    Locale.ROOT,
                    "  node %d: CPUs %s%s%s%s%n",
                    n.id(),
                    cpus(n.cpus()),
                    n.memoryBytes() > 0 ? ", " + gib(n.memoryBytes()) : "",
                    n.distances().isEmpty()
                            ? ""
                            : ", distances "
                                    + n.distances().stream()
                                            .map(String::valueOf)
                                            .collect(Collectors.joining(" ")),
                    n.hasCpus() ? "" : " (memory only: never a CPU home)");
        }
        List<PciDevice> rows = t.computeDevices();
        List<PciDevice> nics = t.nics();
        List<NvmeController> drives = t.nvmeControllers();
        List<String> cols = new ArrayList<>();
        for (int i = 0; i < nics.size(); i++) {
            cols.add("NIC" + i);
        }
        for (int i = 0; i < drives.size(); i++) {
            cols.add("NVME" + i);
        }
        out.println();
        if (rows.isEmpty()) {
            out.println("no GPU or accelerator: nothing to rank (the matrix has no rows)");
        } else {
            int w = Math.max(6, cols.stream().mapToInt(String::length).max().orElse(4) + 2);
            StringBuilder head = new StringBuilder(String.format(Locale.ROOT, "%-10s", ""));
            cols.forEach(c -> head.append(String.format(Locale.ROOT, "%" + w + "s", c)));
            head.append("   CPU affinity   NUMA");
            out.println(head);
            for (int r = 0; r < rows.size(); r++) {
                PciDevice g = rows.get(r);
                Affinity a = t.affinity().get(r);
                Map<Object, Ranked<?>> byTarget = new HashMap<>();
                a.nics().forEach(x -> byTarget.put(x.target(), x));
                a.nvme().forEach(x -> byTarget.put(x.target(), x));
                StringBuilder line = new StringBuilder(
                        String.format(Locale.ROOT, "%-10s", (g.kind() == DeviceKind.GPU ? "GPU" : "ACC") + r));
                for (PciDevice n : nics) {
                    line.append(cell(byTarget.get(n), w));
                }
                for (NvmeController d : drives) {
                    line.append(cell(byTarget.get(d), w));
                }
                List<Integer> local = g.localCpus().isEmpty()
                        ? t.numaNode(g.numaNode()).map(NumaNode::cpus).orElse(List.of())
                        : g.localCpus();
                line.append(String.format(
                        Locale.ROOT,
                        "   %-14s %s",
                        local.isEmpty() ? "-" : cpus(local),
                        g.numaNode() < 0 ? "N/A" : Integer.toString(g.numaNode())));
                out.println(line);
            }
            out.println();
            out.println(
                    "Legend: * best NIC and best drive for the row (ties share it); PIX same switch port, PXB PCIe switch,");
            out.println("        PHB same host bridge, NODE same NUMA node, SYS across sockets");
        }
        out.println();
        for (int r = 0; r < rows.size(); r++) {
            PciDevice g = rows.get(r);
            out.printf(
                    Locale.ROOT,
                    "  %s%d: %s %s:%s%n",
                    g.kind() == DeviceKind.GPU ? "GPU" : "ACC",
                    r,
                    g.address(),
                    g.vendorHex(),
                    g.deviceHex());
        }
        for (int i = 0; i < nics.size(); i++) {
            PciDevice n = nics.get(i);
            out.printf(
                    Locale.ROOT,
                    "  NIC%d: %s %s%s, NUMA %s%n",
                    i,
                    n.address(),
                    n.names().isEmpty() ? "(no name)" : String.join(" ", n.names()),
                    n.lineRateGbps() > 0 ? String.format(Locale.ROOT, ", %.0f Gb/s", n.lineRateGbps()) : "",
                    n.numaNode() < 0 ? "unknown" : Integer.toString(n.numaNode()));
        }
        for (int i = 0; i < drives.size(); i++) {
            NvmeController d = drives.get(i);
            out.printf(
                    Locale.ROOT,
                    "  NVME%d: %s %s%s%s%n",
                    i,
                    d.name().isEmpty() ? "(unnamed)" : d.name(),
                    d.transport(),
                    d.pci().map(p -> " " + p).orElse(""),
                    d.fabrics()
                            ? " " + d.address() + d.via().map(v -> " via " + v).orElse(" (NIC unknown)")
                            : "");
        }
        if (nics.isEmpty()) {
            out.println("  no RDMA NIC"
                    + (t.devices(DeviceKind.NIC).isEmpty()
                            ? ""
                            : " passes the filter '" + t.nicFilter().spec() + "'"));
        }
        if (!t.warnings().isEmpty()) {
            out.println();
            out.println("warnings:");
            t.warnings().forEach(w -> out.println("  " + w));
        }
    }

    private static String cell(Ranked<?> r, int w) {
        if (r == null) {
            return String.format(Locale.ROOT, "%" + w + "s", "-");
        }
        Level l = r.level();
        return String.format(Locale.ROOT, "%" + w + "s", (r.tieGroup() == 0 ? "*" : "") + l.name());
    }
}
