package io.rdma4j.topology;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

/**
 * Writes a small sysfs tree in the kernel's layout (devices under {@code sys/devices/pciDDDD:BB/...}, relative links
 * in {@code sys/bus/pci/devices} and {@code sys/class/*}): the facts of the real-machine captures in ../shared that the
 * tests check (see {@link XeonPhiShapeTest}), written here so that a bare clone carries its own test inputs, and shapes
 * no capture covers (cloud VMs that the vendor files describe, NVMe over fabrics, multipath). It is scanner input, not
 * a stand-in for the scanner.
 */
final class FakeSysfs {
    final Path root;

    FakeSysfs(Path root) {
        this.root = root;
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
    FakeSysfs node(int id, String cpulist, String distances) {
        Path d = root.resolve("sys/devices/system/node/node" + id);
        write(d.resolve("cpulist"), cpulist);
        write(d.resolve("distance"), distances);
        write(d.resolve("meminfo"), "Node " + id + " MemTotal:       16384000 kB");
        return this;
    }

    /** The online CPUs, which a kernel without NUMA (no {@code devices/system/node}) still lists. */
    FakeSysfs onlineCpus(String cpulist) {
        write(root.resolve("sys/devices/system/cpu/online"), cpulist);
        return this;
    }

    /** {@code proc/cpuinfo} with one entry per CPU of {@code model} and {@code proc/meminfo}, as captures keep them. */
    FakeSysfs proc(String model, int packages, int cpusPerPackage, long memKb) {
        StringBuilder info = new StringBuilder();
        for (int p = 0, cpu = 0; p < packages; p++) {
            for (int c = 0; c < cpusPerPackage; c++, cpu++) {
                info.append("processor\t: ").append(cpu).append("\nmodel name\t: ").append(model)
                        .append("\nphysical id\t: ").append(p).append("\ncore id\t\t: ").append(c).append("\n\n");
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
    FakeSysfs bridge(String hostBridge, List<String> chain, String bdf, int vendor, int device, int numa,
                     String localCpus) {
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
     * A PCI function at {@code hostBridge/chain.../bdf}; bridges on the chain get attribute files (class 0x060400)
     * and bus links of their own.
     */
    FakeSysfs pci(String hostBridge, List<String> chain, String bdf, int classCode, int vendor, int device, int numa,
                  String localCpus, String speed, int width) {
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
        attrs(root.resolve("sys/devices").resolve(rel.toString()), classCode, vendor, device, numa, localCpus, speed,
                width);
        link(root.resolve("sys/bus/pci/devices").resolve(bdf), "../../../devices/" + rel);
        return this;
    }

    private static void attrs(Path d, int classCode, int vendor, int device, int numa, String localCpus, String speed,
                              int width) {
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

    Path deviceDir(String bdf) {
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
            Files.createSymbolicLink(link, from.relativize(target.toAbsolutePath().normalize()));
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
    FakeSysfs ib(String name, String bdf, String rate, String... netdevs) {
        return verbs(name, bdf, rate, "Ethernet", netdevs);
    }

    /**
     * A class link in {@code sys/class/infiniband} whose target the capture does not hold, as Xeon Phi's
     * {@code scif0 -> ../../devices/scif_dma_0/infiniband/scif0}: a verbs device with no PCI parent.
     */
    FakeSysfs danglingIb(String name, String parentDevice) {
        link(root.resolve("sys/class/infiniband").resolve(name),
                "../../devices/" + parentDevice + "/infiniband/" + name);
        return this;
    }

    /** A verbs device of the given link layer ({@code InfiniBand}, {@code Ethernet}), one port per netdev. */
    FakeSysfs verbs(String name, String bdf, String rate, String linkLayer, String... netdevs) {
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

    /** A PCIe NVMe controller {@code nvmeN} on a PCI function. */
    FakeSysfs nvmePcie(String name, String bdf) {
        Path ctl = deviceDir(bdf).resolve("nvme").resolve(name);
        write(ctl.resolve("transport"), "pcie");
        write(ctl.resolve("subsysnqn"), "nqn.2014.08.org.nvmexpress:local");
        linkTo(ctl.resolve("device"), deviceDir(bdf));
        linkTo(root.resolve("sys/class/nvme").resolve(name), real(ctl));
        return this;
    }

    /** A fabrics NVMe controller as nvme-cli connect leaves it under devices/virtual/nvme-fabrics/ctl. */
    FakeSysfs nvmeFabrics(String name, String transport, String address, String nqn, int numa) {
        Path ctl = root.resolve("sys/devices/virtual/nvme-fabrics/ctl").resolve(name);
        write(ctl.resolve("transport"), transport);
        write(ctl.resolve("address"), address);
        write(ctl.resolve("subsysnqn"), nqn);
        write(ctl.resolve("numa_node"), Integer.toString(numa));
        linkTo(root.resolve("sys/class/nvme").resolve(name), real(ctl));
        return this;
    }

    /** A native-multipath namespace head in a subsystem with one path device per controller and its ANA state. */
    FakeSysfs multipathNamespace(String subsys, String ns, List<String> paths, List<String> anaStates) {
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
}
