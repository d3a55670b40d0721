package io.rdma4j.topology;

import io.rdma4j.ffi.Extended;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link XeonPhiChecks} on the capture hwloc/linux/32em64t-2n8c+dax+nvme+mic+dimms, unpacked on first use. */
@Extended
class XeonPhiCaptureTest extends XeonPhiChecks {
    @TempDir
    static Path tmp;

    @Override
    Path root() {
        return Fixtures.unpackOnce("hwloc/linux/32em64t-2n8c+dax+nvme+mic+dimms.tar.bz2", tmp);
    }

    @Test
    void agreesWithHwlocsOwnReportOfTheSameCapture() {
        Fixtures.agreesWithHwloc(topo(), "hwloc/linux/32em64t-2n8c+dax+nvme+mic+dimms.xml");
    }
}
