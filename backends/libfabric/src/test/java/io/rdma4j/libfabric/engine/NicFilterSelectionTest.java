package io.rdma4j.libfabric.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.topology.NicFilter;
import io.rdma4j.topology.NicFilterCases;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The NIC filter picks libfabric domains by topology's {@link NicFilter} rules, the same table ibverbs passes. */
class NicFilterSelectionTest {
    @Test
    void picksDomainsAsTheSharedTableSays() {
        List<String> wrong = new ArrayList<>();
        for (NicFilterCases.Case c : NicFilterCases.CASES) {
            NicFilter f = NicFilter.parse(c.filter());
            List<String> kept = NicFilterCases.DEVICES.stream()
                    .filter(d -> ProviderSelection.allowed(f, d))
                    .toList();
            if (!kept.equals(c.kept())) {
                wrong.add("'" + c.filter() + "' kept " + kept + ", expected " + c.kept());
            }
        }
        assertEquals(List.of(), wrong);
    }

    @Test
    void matchesEfaDomainsByTheirDevice() {
        assertTrue(ProviderSelection.allowed(NicFilter.parse("=rdmap0s6"), "rdmap0s6-rdm"));
        assertFalse(ProviderSelection.allowed(NicFilter.parse("^rdmap0s6"), "rdmap0s6-dgrm"));
        assertEquals("lo", ProviderSelection.deviceName("lo"));
    }
}
