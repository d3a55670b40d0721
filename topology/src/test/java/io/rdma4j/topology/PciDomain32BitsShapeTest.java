package io.rdma4j.topology;

import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link PciDomain32BitsChecks} on the tree {@link FakeSysfs#qemuGuestWithFiveDigitDomain} writes with the capture's
 * facts.
 */
class PciDomain32BitsShapeTest extends PciDomain32BitsChecks {
    @TempDir
    static Path tmp;

    private static Path root;

    @Override
    Path root() {
        synchronized (PciDomain32BitsShapeTest.class) {
            if (root == null) {
                root = FakeSysfs.qemuGuestWithFiveDigitDomain(tmp.resolve("pcidomain32bits"));
            }
            return root;
        }
    }
}
