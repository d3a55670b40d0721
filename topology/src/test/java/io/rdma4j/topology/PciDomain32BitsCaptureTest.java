package io.rdma4j.topology;

import io.rdma4j.ffi.Extended;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** {@link PciDomain32BitsChecks} on the capture hwloc/linux/2pa-pcidomain32bits, unpacked on first use. */
@Extended
class PciDomain32BitsCaptureTest extends PciDomain32BitsChecks {
    @TempDir
    static Path tmp;
    private static Path root;

    @Override
    Path root() {
        synchronized (PciDomain32BitsCaptureTest.class) {
            if (root == null) {
                try {
                    root = Fixtures.unpack("hwloc/linux/2pa-pcidomain32bits.tar.bz2", tmp);
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
}
