package io.rdma4j.libfabric.engine;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import io.rdma4j.BackendUnavailableException;
import io.rdma4j.engine.spi.BackendConfig;
import io.rdma4j.engine.spi.BackendOptions;
import io.rdma4j.engine.spi.LaneDescriptor;
import io.rdma4j.libfabric.Libfabric;
import org.junit.jupiter.api.Test;

/**
 * Socket providers must bind engine lanes to a named interface, loopback by default, never to whatever interface comes
 * first.
 */
class SourceAddressTest {
    @Test
    void tcpLanesBindToLoopbackByDefault() {
        assumeTrue(Libfabric.isAvailable(), "libfabric not installed");
        try (LibfabricEngineBackend b = LibfabricEngineBackend.open(new BackendConfig("tcp", 2, 4))) {
            assertFalse(b.lanes().isEmpty());
            for (LaneDescriptor l : b.lanes()) {
                assertEquals("lo", l.device(), "lane " + l + " of " + b.description());
            }
        }
    }

    @Test
    void unknownSourceAddressIsAClearError() {
        assumeTrue(Libfabric.isAvailable(), "libfabric not installed");
        // 127.0.0.1 is the only address guaranteed here; 203.0.113.7 (TEST-NET-3) belongs to no local interface
        var e = assertThrows(
                BackendUnavailableException.class,
                () -> LibfabricEngineBackend.open(
                        new BackendConfig("tcp", 1, 4, BackendOptions.DEFAULTS.withSourceAddress("203.0.113.7"))));
        assertTrue(e.getMessage().contains("203.0.113.7") && e.getMessage().contains("sourceAddress"), e.getMessage());
    }

    @Test
    void onlySocketProvidersHaveASourceAddress() {
        BackendConfig none = new BackendConfig(null, 1, 4);
        assertNull(ProviderSelection.sourceAddress(none, "shm"));
        assertNull(ProviderSelection.sourceAddress(none, "efa"));
        assertNull(ProviderSelection.sourceAddress(none, "verbs;ofi_rxm"));
        assertEquals(
                "10.1.2.3",
                ProviderSelection.sourceAddress(
                        new BackendConfig(null, 1, 4, BackendOptions.DEFAULTS.withSourceAddress("10.1.2.3")),
                        "tcp;ofi_rxm"));
    }
}
