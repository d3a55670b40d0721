package io.rdma4j.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import io.rdma4j.ffi.Extended;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link PciLocalityChecks} on the capture hwloc/linux/40intel64-2g2n4c+pcilocality, unpacked on first use. */
@Extended
class PciLocalityCaptureTest extends PciLocalityChecks {
    @TempDir
    static Path tmp;
    private static Path root;

    @Override
    Path root() {
        synchronized (PciLocalityCaptureTest.class) {
            if (root == null) {
                try {
                    root = Fixtures.unpack("hwloc/linux/40intel64-2g2n4c+pcilocality.tar.bz2", tmp);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    throw new IllegalStateException(e);
                }
            }
            return root;
        }
    }

    @Test
    void agreesWithHwlocsOwnReportOfTheSameCapture() {
        Topology hwloc = Fixtures.xml("hwloc/linux/40intel64-2g2n4c+pcilocality.xml");
        List<PciDevice> placed = topo().devices().stream().filter(d -> d.kind() != DeviceKind.OTHER).toList();
        assertFalse(placed.isEmpty());
        for (PciDevice d : placed) {
            PciDevice h = hwloc.device(d.address()).orElseThrow(() -> new AssertionError("hwloc lacks " + d.address()));
            assertEquals(d.kind(), h.kind(), d.address().toString());
            assertEquals(d.path().stream().map(PciBridge::address).toList(),
                    h.path().stream().map(PciBridge::address).toList());
            if (h.numaNode() >= 0) {
                assertEquals(h.numaNode(), d.numaNode(), d.address().toString());
            }
        }
        assertEquals(hwloc.numaNodes().stream().map(NumaNode::cpus).toList(),
                topo().numaNodes().stream().map(NumaNode::cpus).toList());
    }
}
