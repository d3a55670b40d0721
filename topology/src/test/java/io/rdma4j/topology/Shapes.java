package io.rdma4j.topology;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The project's own test inputs: topology files under {@code src/test/resources/io/rdma4j/topology/shapes}, written for
 * these tests to reproduce the facts of the real-machine captures in ../shared (which only {@code @Extended} tests
 * read, through {@link Fixtures}) and shapes no capture has. The engine's and the command line's tests use them too,
 * from this module's test-jar, through {@link #copy}.
 */
public final class Shapes {
    /** AWS p4d.24xlarge: 8 A100 and 4 EFA under 4 synthetic switches, two per NUMA node. */
    public static final String P4D = "p4d.xml";
    /** Azure NDv4: 4 NUMA nodes, each a synthetic switch with 2 A100 and 2 InfiniBand NICs that tie. */
    public static final String NDV4 = "ndv4.xml";
    /** Azure NC A100 v4: 4 A100, one per NUMA node, and no RDMA NIC. */
    public static final String NCV4 = "ncv4.xml";
    /** AMD's 8 MI300X with 8 ConnectX-7, each GPU 1:1 with its NIC at PXB. */
    public static final String MI300X = "mi300x.xml";

    private Shapes() {}

    /**
     * Copies a shape file to {@code dir} under its own name (a test-jar's resources are no files), replacing an earlier
     * copy.
     *
     * @param name a file name such as {@link #P4D}
     * @param dir an existing folder, usually a test's {@code @TempDir}
     * @return the copy
     */
    public static Path copy(String name, Path dir) {
        try (InputStream in = Shapes.class.getResourceAsStream("shapes/" + name)) {
            assertNotNull(in, "test resource missing: io/rdma4j/topology/shapes/" + name);
            Path file = dir.resolve(name);
            Files.copy(in, file, StandardCopyOption.REPLACE_EXISTING);
            return file;
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    static Path file(String name) {
        URL url = Shapes.class.getResource("shapes/" + name);
        assertNotNull(url, "test resource missing: io/rdma4j/topology/shapes/" + name);
        try {
            return Path.of(url.toURI());
        } catch (URISyntaxException e) {
            throw new IllegalStateException(url.toString(), e);
        }
    }

    static Topology xml(String name) {
        return Topology.builder().ncclXml(file(name)).nicFilter("").build();
    }

    static PciAddress bdf(String s) {
        return PciAddress.parse(s);
    }

    static Set<PciAddress> set(String... bdfs) {
        return Arrays.stream(bdfs).map(PciAddress::parse).collect(Collectors.toSet());
    }

    /** The addresses in tie group 0: the NICs the location should spread its traffic over. */
    static Set<PciAddress> best(Topology t, String location) {
        return t.rankNics(location).stream()
                .filter(r -> r.tieGroup() == 0)
                .map(Ranked::address)
                .collect(Collectors.toSet());
    }
}
