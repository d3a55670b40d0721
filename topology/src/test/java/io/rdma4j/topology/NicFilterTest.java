package io.rdma4j.topology;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** NCCL_IB_HCA semantics, through {@link NicFilter} and through {@link Topology.Builder} (on {@code mi300x.xml}). */
class NicFilterTest {
    private static Topology mi300x(Map<String, String> env, String spec) {
        return Topology.builder()
                .ncclXml(Shapes.file("mi300x.xml"))
                .environment(env)
                .nicFilter(spec)
                .build();
    }

    private static List<String> names(Topology t) {
        return t.nics().stream().map(n -> n.names().get(0)).toList();
    }

    @Test
    void includeListIsPrefixMatched() {
        NicFilter f = NicFilter.parse("mlx5_0,mlx5_3");
        assertTrue(f.allows("mlx5_0", -1));
        assertTrue(f.allows("mlx5_3", 1));
        assertFalse(f.allows("mlx5_1", -1));
        assertTrue(NicFilter.parse("mlx5_1").allows("mlx5_10", -1), "prefix: mlx5_1 also matches mlx5_10");
    }

    @Test
    void caretExcludes() {
        NicFilter f = NicFilter.parse("^mlx5_1");
        assertFalse(f.allows("mlx5_1", -1));
        assertTrue(f.allows("mlx5_0", -1));
    }

    @Test
    void equalsSignMatchesExactly() {
        NicFilter f = NicFilter.parse("=mlx5_1");
        assertTrue(f.allows("mlx5_1", -1));
        assertFalse(f.allows("mlx5_10", -1));
        NicFilter ex = NicFilter.parse("^=mlx5_1");
        assertFalse(ex.allows("mlx5_1", -1));
        assertTrue(ex.allows("mlx5_10", -1));
    }

    @Test
    void portSuffixRestrictsToOnePort() {
        NicFilter f = NicFilter.parse("mlx5_0:1");
        assertTrue(f.allows("mlx5_0", 1));
        assertFalse(f.allows("mlx5_0", 2));
        NicFilter ex = NicFilter.parse("^mlx5_0:2");
        assertTrue(ex.allows("mlx5_0", -1), "excluding one port keeps the device");
        assertFalse(ex.allows("mlx5_0", 2));
    }

    @Test
    void malformedPortIsRejectedWithTheFix() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> NicFilter.parse("mlx5_0:x"));
        assertTrue(e.getMessage().contains("mlx5_0:x") && e.getMessage().contains("port number"), e.getMessage());
    }

    @Test
    void blankLetsEverythingThrough() {
        assertTrue(NicFilter.parse(" ").isAll());
        assertTrue(NicFilter.parse(null).allows("anything", 3));
    }

    @Test
    void environmentVariableFiltersNicsAndRankings() {
        Topology t = mi300x(Map.of(NicFilter.ENV, "^mlx5_0"), null);
        assertEquals(7, t.nics().size());
        assertFalse(names(t).contains("mlx5_0"));
        // GPU 0c's own NIC is excluded: its best is now another NUMA-0 NIC at NODE
        assertEquals(Level.NODE, t.rankNics("0000:0c:00.0").get(0).level());
        assertEquals(8, t.devices(DeviceKind.NIC).size(), "devices() still lists every NIC");
    }

    @Test
    void builderOptionOverridesTheEnvironment() {
        Topology t = mi300x(Map.of(NicFilter.ENV, "^mlx5_0"), "mlx5_0,mlx5_3");
        assertEquals(List.of("mlx5_0", "mlx5_3"), names(t));
        assertEquals("mlx5_0,mlx5_3", t.nicFilter().spec());
    }

    @Test
    void filterThatRemovesEveryNicSaysSo() {
        Topology t = mi300x(Map.of(), "=mlx5_9");
        TopologyException e = assertThrows(TopologyException.class, t::requireNics);
        assertTrue(e.getMessage().contains("=mlx5_9") && e.getMessage().contains(NicFilter.ENV), e.getMessage());
    }

    @Test
    void withNicFilterReplacesTheFilter() {
        Topology t = mi300x(Map.of(), "").withNicFilter(NicFilter.parse("mlx5_7"));
        assertEquals(List.of("mlx5_7"), names(t));
    }
}
