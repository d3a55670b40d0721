package io.rdma4j.topology;

import io.rdma4j.ffi.Extended;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** {@link PciDomain32BitsChecks} on the capture hwloc/linux/2pa-pcidomain32bits, unpacked on first use. */
@Extended
class PciDomain32BitsCaptureTest extends PciDomain32BitsChecks {
    @TempDir
    static Path tmp;

    @Override
    Path root() {
        return Fixtures.unpackOnce("hwloc/linux/2pa-pcidomain32bits.tar.bz2", tmp);
    }
}
