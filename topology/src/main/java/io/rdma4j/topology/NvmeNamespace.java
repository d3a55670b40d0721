package io.rdma4j.topology;

import java.util.List;

/**
 * A namespace as the host sees it: with native NVMe multipath one block device ({@code nvme0n1}) reached through one
 * path per controller, each with its own NUMA locality.
 *
 * @param name block device name
 * @param subsystem NVMe subsystem ({@code nvme-subsys0}); empty when unknown
 * @param paths the controllers that reach it
 */
public record NvmeNamespace(String name, String subsystem, List<Path> paths) {
    public NvmeNamespace {
        paths = List.copyOf(paths);
    }

    /**
     * One path to a namespace.
     *
     * @param name path device ({@code nvme0c1n1}), or the namespace name when there is no multipath
     * @param controller controller name ({@code nvme1})
     * @param anaState ANA state ({@code optimized}, {@code non-optimized}, ...), empty when not reported
     * @param numaNode NUMA node of the controller, -1 when unknown
     */
    public record Path(String name, String controller, String anaState, int numaNode) {}
}
