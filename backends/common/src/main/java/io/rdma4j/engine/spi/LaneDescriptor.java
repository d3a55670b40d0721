package io.rdma4j.engine.spi;

/**
 * One lane a backend offers: an endpoint or queue pair on a device. Lanes are numbered {@code 0..n-1} in
 * {@link EngineBackend#lanes()} order and the number is what every posting call takes.
 *
 * @param index the lane number
 * @param device the device name ({@code mlx5_0}, {@code efa_0}, or the provider's domain such as {@code lo})
 * @param pciAddress the NIC's PCI address ({@code dddd:bb:dd.f}), or {@code null} when the lane is not a PCI NIC
 *     (libfabric {@code shm}, {@code tcp} over loopback)
 * @param numaNode the NUMA node the lane's device sits on, or -1 when unknown
 * @param bandwidthGbps the link speed used as the lane's weight when striping (gigabits per second, > 0)
 * @param maxMessageBytes the largest single operation the lane accepts
 */
public record LaneDescriptor(
        int index, String device, String pciAddress, int numaNode, double bandwidthGbps, long maxMessageBytes) {
    public LaneDescriptor {
        if (index < 0) {
            throw new IllegalArgumentException("lane index must be >= 0, got " + index);
        }
        if (!(bandwidthGbps > 0)) {
            throw new IllegalArgumentException("lane " + index + ": bandwidthGbps must be > 0, got " + bandwidthGbps);
        }
        if (maxMessageBytes < 1) {
            throw new IllegalArgumentException(
                    "lane " + index + ": maxMessageBytes must be >= 1, got " + maxMessageBytes);
        }
    }
}
