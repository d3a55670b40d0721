package io.rdma4j.topology;

import java.nio.file.Path;
import org.junit.jupiter.api.io.TempDir;

/** {@link XeonPhiChecks} on the tree {@link FakeSysfs#xeonPhiBox} writes with the capture's facts. */
class XeonPhiShapeTest extends XeonPhiChecks {
    @TempDir
    static Path tmp;

    private static Path root;

    @Override
    Path root() {
        synchronized (XeonPhiShapeTest.class) {
            if (root == null) {
                root = FakeSysfs.xeonPhiBox(tmp.resolve("xeon-phi"));
            }
            return root;
        }
    }
}
