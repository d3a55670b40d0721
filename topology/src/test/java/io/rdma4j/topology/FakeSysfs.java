package io.rdma4j.topology;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Writes a small sysfs tree in the kernel's layout (devices under {@code sys/devices/pciDDDD:BB/...}, relative links in
 * {@code sys/bus/pci/devices} and {@code sys/class/*}): the facts of the real-machine captures in ../shared that the
 * tests check ({@link #xeonPhiBox}, {@link #qemuGuestWithFiveDigitDomain}), written here so that a bare clone carries
 * its own test inputs, and shapes no capture covers (cloud VMs that the vendor files describe, NVMe over fabrics,
 * multipath). It is scanner input, not a stand-in for the scanner. The engine's and the command line's tests use it
 * too, from this module's test-jar.
 */
public final class FakeSysfs {
    final Path root;

    /** @param root the folder that will hold {@code sys/} and {@code proc/} */
    public FakeSysfs(Path root) {
        this.root = root;
    }

    /** @return the folder to pass as a filesystem root ({@code Topology.builder().fsroot}, {@code --fsroot}) */
    public Path root() {
        return root;
    }

    private static void write(Path p, String content) {
        try {
            Files.createDirectories(p.getParent());
            Files.writeString(p, content + "\n");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static void link(Path link, String target) {
        try {
            Files.createDirectories(link.getParent());
            Files.deleteIfExists(link);
            Files.createSymbolicLink(link, Path.of(target));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A NUMA node. */
    public FakeSysfs node(int id, String cpulist, String distances) {
        Path d = root.resolve("sys/devices/system/node/node" + id);
        write(d.resolve("cpulist"), cpulist);
        write(d.resolve("distance"), distances);
        write(d.resolve("meminfo"), "Node " + id + " MemTotal:       16384000 kB");
        return this;
    }

    /** The online CPUs, which a kernel without NUMA (no {@code devices/system/node}) still lists. */
    public FakeSysfs onlineCpus(String cpulist) {
        write(root.resolve("sys/devices/system/cpu/online"), cpulist);
        return this;
    }

    /** {@code proc/cpuinfo} with one entry per CPU of {@code model} and {@code proc/meminfo}, as captures keep them. */
    public FakeSysfs proc(String model, int packages, int cpusPerPackage, long memKb) {
        StringBuilder info = new StringBuilder();
        for (int p = 0, cpu = 0; p < packages; p++) {
            for (int c = 0; c < cpusPerPackage; c++, cpu++) {
                info.append("processor\t: ")
                        .append(cpu)
                        .append("\nmodel name\t: ")
                        .append(model)
                        .append("\nphysical id\t: ")
                        .append(p)
                        .append("\ncore id\t\t: ")
                        .append(c)
                        .append("\n\n");
            }
        }
        write(root.resolve("proc/cpuinfo"), info.toString());
        write(root.resolve("proc/meminfo"), "MemTotal:       " + memKb + " kB");
        return this;
    }

    /**
     * A bridge with its own ids at {@code hostBridge/chain.../bdf} (a BMC's bridge, a NIC's internal switch); the
     * bridges that {@link #pci} creates on its chains are Intel root or switch ports.
     */
    public FakeSysfs bridge(
            String hostBridge, List<String> chain, String bdf, int vendor, int device, int numa, String localCpus) {
        StringBuilder rel = new StringBuilder(hostBridge);
        for (String b : chain) {
            rel.append('/').append(b);
        }
        rel.append('/').append(bdf);
        attrs(root.resolve("sys/devices").resolve(rel.toString()), 0x060400, vendor, device, numa, localCpus, null, 0);
        link(root.resolve("sys/bus/pci/devices").resolve(bdf), "../../../devices/" + rel);
        return this;
    }

    /**
     * A PCI function at {@code hostBridge/chain.../bdf}; bridges on the chain get attribute files (class 0x060400) and
     * bus links of their own.
     */
    public FakeSysfs pci(
            String hostBridge,
            List<String> chain,
            String bdf,
            int classCode,
            int vendor,
            int device,
            int numa,
            String localCpus,
            String speed,
            int width) {
        StringBuilder rel = new StringBuilder(hostBridge);
        for (String b : chain) {
            rel.append('/').append(b);
            Path bd = root.resolve("sys/devices").resolve(rel.toString());
            if (!Files.exists(bd.resolve("class"))) {
                attrs(bd, 0x060400, 0x8086, 0x1234, numa, localCpus, speed, width);
                link(root.resolve("sys/bus/pci/devices").resolve(b), "../../../devices/" + rel);
            }
        }
        rel.append('/').append(bdf);
        attrs(
                root.resolve("sys/devices").resolve(rel.toString()),
                classCode,
                vendor,
                device,
                numa,
                localCpus,
                speed,
                width);
        link(root.resolve("sys/bus/pci/devices").resolve(bdf), "../../../devices/" + rel);
        return this;
    }

    private static void attrs(
            Path d, int classCode, int vendor, int device, int numa, String localCpus, String speed, int width) {
        write(d.resolve("class"), String.format("0x%06x", classCode));
        write(d.resolve("vendor"), String.format("0x%04x", vendor));
        write(d.resolve("device"), String.format("0x%04x", device));
        write(d.resolve("numa_node"), Integer.toString(numa));
        write(d.resolve("local_cpulist"), localCpus);
        if (speed != null) {
            write(d.resolve("current_link_speed"), speed);
            write(d.resolve("current_link_width"), Integer.toString(width));
        }
    }

    public Path deviceDir(String bdf) {
        try {
            return root.resolve("sys/bus/pci/devices").resolve(bdf).toRealPath();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A relative link, as sysfs has them, from {@code link} to {@code target}. */
    private static void linkTo(Path link, Path target) {
        try {
            Files.createDirectories(link.getParent());
            Path from = link.getParent().toRealPath();
            Files.deleteIfExists(link);
            Files.createSymbolicLink(
                    link, from.relativize(target.toAbsolutePath().normalize()));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private Path real(Path p) {
        try {
            return p.toRealPath();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A RoCE verbs device on a PCI function with one port per netdev (a dual-port NIC is one function, two ports). */
    public FakeSysfs ib(String name, String bdf, String rate, String... netdevs) {
        return verbs(name, bdf, rate, "Ethernet", netdevs);
    }

    /**
     * A class link in {@code sys/class/infiniband} whose target the capture does not hold, as Xeon Phi's {@code scif0
     * -> ../../devices/scif_dma_0/infiniband/scif0}: a verbs device with no PCI parent.
     */
    public FakeSysfs danglingIb(String name, String parentDevice) {
        link(
                root.resolve("sys/class/infiniband").resolve(name),
                "../../devices/" + parentDevice + "/infiniband/" + name);
        return this;
    }

    /** A verbs device of the given link layer ({@code InfiniBand}, {@code Ethernet}), one port per netdev. */
    public FakeSysfs verbs(String name, String bdf, String rate, String linkLayer, String... netdevs) {
        Path dev = deviceDir(bdf);
        Path ib = dev.resolve("infiniband").resolve(name);
        for (int i = 0; i < netdevs.length; i++) {
            Path port = ib.resolve("ports/" + (i + 1));
            write(port.resolve("state"), "4: ACTIVE");
            write(port.resolve("rate"), rate);
            write(port.resolve("link_layer"), linkLayer);
            write(port.resolve("gid_attrs/ndevs/0"), netdevs[i]);
            write(dev.resolve("net").resolve(netdevs[i]).resolve("dev_port"), Integer.toString(i));
        }
        linkTo(root.resolve("sys/class/infiniband").resolve(name), real(ib));
        return this;
    }

    /**
     * A verbs device with one port as kernels before {@code gid_attrs} list it: the port names no network interface,
     * and the scanner takes the function's only one (write it with {@link #netdev}).
     *
     * @param state the port's {@code state} file, e.g. {@code 4: ACTIVE}
     * @param rate the port's {@code rate} file, e.g. {@code 56 Gb/sec (4X FDR)}
     * @param linkLayer {@code InfiniBand} or {@code Ethernet}
     */
    public FakeSysfs legacyVerbs(String name, String bdf, String state, String rate, String linkLayer) {
        Path ib = deviceDir(bdf).resolve("infiniband").resolve(name);
        Path port = ib.resolve("ports/1");
        write(port.resolve("state"), state);
        write(port.resolve("rate"), rate);
        write(port.resolve("link_layer"), linkLayer);
        linkTo(root.resolve("sys/class/infiniband").resolve(name), real(ib));
        return this;
    }

    /** A network interface of a PCI function, under its {@code net/} and linked from {@code sys/class/net}. */
    public FakeSysfs netdev(String bdf, String name) {
        Path nd = deviceDir(bdf).resolve("net").resolve(name);
        write(nd.resolve("dev_id"), "0x0");
        linkTo(root.resolve("sys/class/net").resolve(name), real(nd));
        return this;
    }

    /**
     * A file below a PCI function's folder that no other method writes, e.g. {@code misc/nvme0/dev} (old kernels' NVMe
     * registration) or {@code virtio0/net/ens3/dev_id} (an interface under a virtio child, not the function).
     */
    public FakeSysfs file(String bdf, String rel, String content) {
        write(deviceDir(bdf).resolve(rel), content);
        return this;
    }

    /** Rewrites a function's {@code sys/bus/pci/devices} link to end in {@code /}, as some kernels' links do. */
    public FakeSysfs busLinkWithTrailingSlash(String bdf) {
        Path l = root.resolve("sys/bus/pci/devices").resolve(bdf);
        try {
            link(l, Files.readSymbolicLink(l) + "/");
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return this;
    }

    /** A PCIe NVMe controller {@code nvmeN} on a PCI function. */
    public FakeSysfs nvmePcie(String name, String bdf) {
        Path ctl = deviceDir(bdf).resolve("nvme").resolve(name);
        write(ctl.resolve("transport"), "pcie");
        write(ctl.resolve("subsysnqn"), "nqn.2014.08.org.nvmexpress:local");
        linkTo(ctl.resolve("device"), deviceDir(bdf));
        linkTo(root.resolve("sys/class/nvme").resolve(name), real(ctl));
        return this;
    }

    /** A fabrics NVMe controller as nvme-cli connect leaves it under devices/virtual/nvme-fabrics/ctl. */
    public FakeSysfs nvmeFabrics(String name, String transport, String address, String nqn, int numa) {
        Path ctl = root.resolve("sys/devices/virtual/nvme-fabrics/ctl").resolve(name);
        write(ctl.resolve("transport"), transport);
        write(ctl.resolve("address"), address);
        write(ctl.resolve("subsysnqn"), nqn);
        write(ctl.resolve("numa_node"), Integer.toString(numa));
        linkTo(root.resolve("sys/class/nvme").resolve(name), real(ctl));
        return this;
    }

    /** A native-multipath namespace head in a subsystem with one path device per controller and its ANA state. */
    public FakeSysfs multipathNamespace(String subsys, String ns, List<String> paths, List<String> anaStates) {
        Path s = root.resolve("sys/devices/virtual/nvme-subsystem").resolve(subsys);
        Path head = s.resolve(ns);
        write(head.resolve("nsid"), "1");
        for (int i = 0; i < paths.size(); i++) {
            String p = paths.get(i);
            String ctrl = "nvme" + p.substring(p.indexOf('c') + 1, p.lastIndexOf('n'));
            Path ctlDir = real(root.resolve("sys/class/nvme").resolve(ctrl));
            write(ctlDir.resolve(p).resolve("ana_state"), anaStates.get(i));
            linkTo(head.resolve("multipath").resolve(p), ctlDir.resolve(p));
        }
        linkTo(root.resolve("sys/class/nvme-subsystem").resolve(subsys), real(s));
        return this;
    }

    /**
     * The 2-socket Xeon with a Xeon Phi of the capture {@code hwloc/linux/32em64t-2n8c+dax+nvme+mic+dimms}, with the
     * facts of ../shared/topology/README.md that the tests rank on, each as the capture has it (no link speed files,
     * verbs ports without {@code gid_attrs}):
     *
     * <ul>
     *   <li>NUMA 0 = CPUs 0-7, NUMA 1 = CPUs 8-15 (distance 21), two E5-2680 packages of 8 CPUs;
     *   <li>on pci0000:00: the Intel I350 (8086:1521, class 0x0200) {@code eth0} at 02:00.0 and {@code eth1} at 02:00.3
     *       behind root port 00:01.1, without verbs devices: not RDMA NICs; an NVMe drive (8086:0953) at 00:02.0 with
     *       {@code numa_node=-1} but {@code local_cpulist=0-3}, registered only as {@code misc/nvme0} (no
     *       {@code /sys/class/nvme}): NUMA 0; the SATA controller 00:1f.2; the ASPEED BMC video (1a03:2000, class
     *       0x0300) at 05:00.0 behind 00:1c.0 and its own bridge 04:00.0: not a GPU;
     *   <li>on pci0000:80 (NUMA 1): the ConnectX-3 (15b3:1003, class 0x0280, verbs device {@code mlx4_0}, one active 56
     *       Gb/s InfiniBand port, interface {@code ib0}) at 82:00.0 behind root port 80:02.2, and the Xeon Phi
     *       (8086:225c, class 0x0b40) at 83:00.0 behind root port 80:03.0: PHB;
     *   <li>{@code /sys/class/infiniband/scif0} pointing to {@code devices/scif_dma_0}, which the tree lacks.
     * </ul>
     *
     * It writes a few of the capture's 150 PCI functions; those read like the capture's.
     *
     * @param dir an empty folder
     * @return the filesystem root to scan
     */
    public static Path xeonPhiBox(Path dir) {
        FakeSysfs fs = new FakeSysfs(dir)
                .node(0, "0-7", "10 21")
                .node(1, "8-15", "21 10")
                .onlineCpus("0-15")
                .proc("Intel(R) Xeon(R) CPU E5-2680 0 @ 2.70GHz", 2, 8, 32_836_008);
        List<String> rp = List.of("0000:00:01.1");
        fs.bridge("pci0000:00", List.of(), "0000:00:01.1", 0x8086, 0x3c03, 0, "0-7")
                .pci("pci0000:00", rp, "0000:02:00.0", 0x020000, 0x8086, 0x1521, 0, "0-7", null, 0)
                .netdev("0000:02:00.0", "eth0")
                .pci("pci0000:00", rp, "0000:02:00.3", 0x020000, 0x8086, 0x1521, 0, "0-7", null, 0)
                .netdev("0000:02:00.3", "eth1")
                .pci("pci0000:00", List.of(), "0000:00:02.0", 0x010802, 0x8086, 0x0953, -1, "0-3", null, 0)
                .file("0000:00:02.0", "misc/nvme0/dev", "10:57")
                .pci("pci0000:00", List.of(), "0000:00:1f.2", 0x010601, 0x8086, 0x1d02, 0, "0-7", null, 0)
                .bridge("pci0000:00", List.of(), "0000:00:1c.0", 0x8086, 0x1d10, 0, "0-7")
                .bridge("pci0000:00", List.of("0000:00:1c.0"), "0000:04:00.0", 0x1a03, 0x1150, 0, "0-7")
                .pci(
                        "pci0000:00",
                        List.of("0000:00:1c.0", "0000:04:00.0"),
                        "0000:05:00.0",
                        0x030000,
                        0x1a03,
                        0x2000,
                        0,
                        "0-7",
                        null,
                        0)
                .bridge("pci0000:80", List.of(), "0000:80:02.2", 0x8086, 0x3c06, 1, "8-15")
                .pci(
                        "pci0000:80",
                        List.of("0000:80:02.2"),
                        "0000:82:00.0",
                        0x028000,
                        0x15b3,
                        0x1003,
                        1,
                        "8-15",
                        null,
                        0)
                .legacyVerbs("mlx4_0", "0000:82:00.0", "4: ACTIVE", "56 Gb/sec (4X FDR)", "InfiniBand")
                .netdev("0000:82:00.0", "ib0")
                .bridge("pci0000:80", List.of(), "0000:80:03.0", 0x8086, 0x3c08, 1, "8-15")
                .pci(
                        "pci0000:80",
                        List.of("0000:80:03.0"),
                        "0000:83:00.0",
                        0x0b4000,
                        0x8086,
                        0x225c,
                        1,
                        "8-15",
                        null,
                        0)
                .danglingIb("scif0", "scif_dma_0");
        return fs.root();
    }

    /**
     * The QEMU guest of the capture {@code hwloc/linux/2pa-pcidomain32bits}: one NUMA node (CPUs 0-1 in two packages, 2
     * GB), functions that report {@code numa_node=-1} with {@code local_cpulist=0-1} and no bridge above them; a Cirrus
     * VGA (1013:00b8) and a virtio network function (1af4:1000) in domain 0 (its {@code ens3} sits under the
     * {@code virtio0} child, not the function, and it has no verbs device); a second host bridge {@code pci10000:00}
     * holding 10000:00:00.0 and the virtio SCSI disk 10000:00:04.0 (1af4:1001, class 0x0100), a PCI domain of 5 hex
     * digits, whose bus links end in {@code /} as the capture's do.
     *
     * @param dir an empty folder
     * @return the filesystem root to scan
     */
    public static Path qemuGuestWithFiveDigitDomain(Path dir) {
        FakeSysfs fs = new FakeSysfs(dir)
                .node(0, "0-1", "10")
                .onlineCpus("0-1")
                .proc("Intel Core Processor (Skylake, IBRS)", 2, 1, 2_052_540);
        List<String> none = List.of();
        fs.pci("pci0000:00", none, "0000:00:02.0", 0x030000, 0x1013, 0x00b8, -1, "0-1", null, 0)
                .pci("pci0000:00", none, "0000:00:03.0", 0x020000, 0x1af4, 0x1000, -1, "0-1", null, 0)
                .file("0000:00:03.0", "virtio0/net/ens3/dev_id", "0x0")
                .pci("pci10000:00", none, "10000:00:00.0", 0x060000, 0x8086, 0x1237, -1, "0-1", null, 0)
                .busLinkWithTrailingSlash("10000:00:00.0")
                .pci("pci10000:00", none, "10000:00:04.0", 0x010000, 0x1af4, 0x1001, -1, "0-1", null, 0)
                .busLinkWithTrailingSlash("10000:00:04.0");
        return fs.root();
    }
}
