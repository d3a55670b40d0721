package io.rdma4j.topology;

import static org.junit.jupiter.api.Assertions.assertNotNull;

import java.net.URISyntaxException;
import java.net.URL;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * The project's own test inputs: topology files under {@code src/test/resources/io/rdma4j/topology/shapes}, written
 * for these tests to reproduce the facts of the real-machine captures in ../shared (which only {@code @Extended} tests
 * read, through {@link Fixtures}) and shapes no capture has.
 */
final class Shapes {
    private Shapes() {
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
        return t.rankNics(location).stream().filter(r -> r.tieGroup() == 0).map(Ranked::address)
                .collect(Collectors.toSet());
    }
}
