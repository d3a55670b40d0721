package io.rdma4j.topology;

import java.util.List;

/**
 * Everything ranked for one GPU or accelerator.
 *
 * @param device the GPU or accelerator
 * @param nics NICs after the include/exclude filter, best first
 * @param nvme NVMe controllers, best first
 */
public record Affinity(PciDevice device, List<Ranked<PciDevice>> nics, List<Ranked<NvmeController>> nvme) {
    public Affinity {
        nics = List.copyOf(nics);
        nvme = List.copyOf(nvme);
    }

    /** @return the NICs that tie for best (empty when there is no NIC) */
    public List<Ranked<PciDevice>> bestNics() {
        return nics.stream().filter(r -> r.tieGroup() == 0).toList();
    }
}
