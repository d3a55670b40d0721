package io.rdma4j.topology;

import io.rdma4j.ffi.Extended;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link PciLocalityChecks} on the capture hwloc/linux/40intel64-2g2n4c+pcilocality, unpacked on first use. */
@Extended
class PciLocalityCaptureTest extends PciLocalityChecks {
    @TempDir
    static Path tmp;

    @Override
    Path root() {
        return Fixtures.unpackOnce("hwloc/linux/40intel64-2g2n4c+pcilocality.tar.bz2", tmp);
    }

    @Test
    void agreesWithHwlocsOwnReportOfTheSameCapture() {
        Fixtures.agreesWithHwloc(topo(), "hwloc/linux/40intel64-2g2n4c+pcilocality.xml");
    }
}
