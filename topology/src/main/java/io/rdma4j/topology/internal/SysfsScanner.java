package io.rdma4j.topology.internal;

import io.rdma4j.topology.PciAddress;
import io.rdma4j.topology.RdmaDevice;
import io.rdma4j.topology.TopologyException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/**
 * Reads {@code sys/} under a filesystem root: the live machine ({@code /}) or a captured tree (hwloc's gather tool,
 * whose tarballs unpack to a folder holding {@code sys/} and {@code proc/}).
 *
 * <p>Every file may be missing or unreadable (old kernels, captures that skipped it, permissions): a missing attribute
 * leaves the field unknown and never aborts the scan. Symbolic links are resolved inside the root, so a captured tree
 * is read the same way as the live one.
 *
 * <p>The scan runs in order, each step a class of its own: {@link NumaScan} (nodes first: devices are placed on them),
 * {@link RdmaScan}, {@link PciScan}, {@link NvmeScan}.
 */
public final class SysfsScanner {
    private SysfsScanner() {}

    /**
     * @param root folder holding {@code sys/} (and optionally {@code proc/})
     * @param live true when this is the running machine: fabrics NVMe controllers are then matched to NICs through the
     *     host's network interfaces
     */
    public static Model scan(Path root, boolean live) {
        SysfsTree tree = new SysfsTree(root);
        if (!Files.isDirectory(tree.realRoot.resolve("sys"))) {
            throw new TopologyException("no sys/ under " + root + ": pass the folder that holds sys/ and proc/ "
                    + "(a captured tree's top folder can differ from its tarball's name)");
        }
        Model model = new Model();
        model.source = live ? "sysfs" : "sysfs:" + root;
        NumaScan numa = new NumaScan(tree, model);
        numa.scan();
        Map<PciAddress, List<RdmaDevice>> rdma = new RdmaScan(tree, model).scan();
        PciScan pci = new PciScan(tree, model, numa);
        pci.scan(rdma);
        new NvmeScan(tree, model, live).scan(pci.pciDirs);
        return model;
    }
}
