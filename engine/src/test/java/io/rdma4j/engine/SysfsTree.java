package io.rdma4j.engine;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * Writes a compact sysfs tree in the kernel's layout into a folder that the topology scanner reads as a captured root:
 * PCI functions under {@code sys/devices/pciDDDD:BB/...}, relative links from {@code sys/bus/pci/devices} and
 * {@code sys/class/*}, attribute files with one value and a newline. It writes only what a test states, so a fixture
 * holds the facts it names and nothing copied from a capture.
 */
public final class SysfsTree {
    private final Path root;

    /** @param root the folder that will hold {@code sys/} */
    public SysfsTree(Path root) {
        this.root = root;
    }

    /** @return the folder to pass as a filesystem root */
    public Path root() {
        return root;
    }

    /** A NUMA node with its CPUs and its row of the distance matrix. */
    public SysfsTree node(int id, String cpulist, String distances) {
        Path d = root.resolve("sys/devices/system/node/node" + id);
        write(d.resolve("cpulist"), cpulist);
        write(d.resolve("distance"), distances);
        return this;
    }

    /**
     * A PCI function (a bridge too) at {@code path} below {@code sys/devices}, e.g.
     * {@code pci0000:80/0000:80:02.2/0000:82:00.0}, with its {@code sys/bus/pci/devices} link. Bridges on the path get
     * no attributes unless they are written by a call of their own, as a test that cares about them does.
     *
     * @param path      host bridge, bridges and the function's own address, separated by {@code /}
     * @param classCode 24-bit class code
     * @param numaNode  the {@code numa_node} file's value ({@code -1} where the firmware did not say)
     * @param cpulist   the {@code local_cpulist} file's value
     */
    public SysfsTree pci(String path, int classCode, int vendor, int device, int numaNode, String cpulist) {
        Path d = devices(path);
        write(d.resolve("class"), String.format("0x%06x", classCode));
        write(d.resolve("vendor"), String.format("0x%04x", vendor));
        write(d.resolve("device"), String.format("0x%04x", device));
        write(d.resolve("numa_node"), Integer.toString(numaNode));
        write(d.resolve("local_cpulist"), cpulist);
        link(root.resolve("sys/bus/pci/devices").resolve(Path.of(path).getFileName()), "../../../devices/" + path);
        return this;
    }

    /**
     * A verbs device with one port on the PCI function at {@code pciPath}, whose network interface is listed under the
     * function's {@code net/} (no {@code gid_attrs}, as on older kernels: the scanner then takes the function's only
     * interface for the only port).
     *
     * @param state     the port's {@code state} file, e.g. {@code 4: ACTIVE}
     * @param rate      the port's {@code rate} file, e.g. {@code 56 Gb/sec (4X FDR)}
     * @param linkLayer {@code InfiniBand} or {@code Ethernet}
     */
    public SysfsTree verbs(String name, String pciPath, String state, String rate, String linkLayer, String netdev) {
        Path ib = devices(pciPath).resolve("infiniband").resolve(name);
        Path port = ib.resolve("ports/1");
        write(port.resolve("state"), state);
        write(port.resolve("rate"), rate);
        write(port.resolve("link_layer"), linkLayer);
        link(root.resolve("sys/class/infiniband").resolve(name), "../../devices/" + pciPath + "/infiniband/" + name);
        return netdev(pciPath, netdev);
    }

    /** A network interface of the PCI function at {@code pciPath}, with its {@code sys/class/net} link. */
    public SysfsTree netdev(String pciPath, String name) {
        write(devices(pciPath).resolve("net").resolve(name).resolve("dev_id"), "0x0");
        link(root.resolve("sys/class/net").resolve(name), "../../devices/" + pciPath + "/net/" + name);
        return this;
    }

    /**
     * A {@code sys/class/infiniband} link whose target the tree does not hold, as captures of virtual verbs devices
     * (Xeon Phi's {@code scif0}) leave them.
     *
     * @param target the link's text, relative to {@code sys/class/infiniband}
     */
    public SysfsTree danglingVerbs(String name, String target) {
        link(root.resolve("sys/class/infiniband").resolve(name), target);
        return this;
    }

    /** A character device folder such as {@code misc/nvme0} under a PCI function (old kernels' NVMe registration). */
    public SysfsTree child(String pciPath, String subdir) {
        write(devices(pciPath).resolve(subdir).resolve("dev"), "10:58");
        return this;
    }

    private Path devices(String path) {
        return root.resolve("sys/devices").resolve(path);
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
}
