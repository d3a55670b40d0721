package io.rdma4j.libfabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.ClosedException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Closing in any order works or throws a clear error; open/close cycles leak no native handles. */
class CloseOrderTest {
    @BeforeAll
    static void libfabricPresent() {
        Libfabric.ensureAvailable();
    }

    @Test
    void endpointBeforeDomainAndDomainWithLiveRegions() {
        try (InfoList infos = Libfabric.getinfo(Peer.hints("shm"));
                Arena arena = Arena.ofShared()) {
            Fabric fabric = Fabric.open(infos.first());
            Domain domain = fabric.openDomain();
            CompletionQueue cq = domain.openCompletionQueue(16);
            AddressVector av = domain.openAddressVector(2);
            Endpoint ep = domain.openEndpoint(cq, av);
            MemoryRegion mr1 = domain.register(arena.allocate(4096));
            MemoryRegion mr2 = domain.register(arena.allocate(4096));
            ep.close();
            ep.close(); // idempotent
            mr1.close();
            domain.close(); // mr2, av and cq are still open: closed with it
            assertFalse(mr2.isOpen());
            assertFalse(cq.isOpen());
            assertFalse(av.isOpen());
            assertThrows(ClosedException.class, mr2::key);
            assertThrows(ClosedException.class, () -> domain.openCompletionQueue(4));
            fabric.close();
            assertThrows(ClosedException.class, fabric::openDomain);
        }
    }

    @Test
    void queueStillBoundToAnEndpointRefusesToCloseClearly() {
        try (InfoList infos = Libfabric.getinfo(Peer.hints("tcp"));
                Fabric fabric = Fabric.open(infos.first())) {
            Domain domain = fabric.openDomain();
            CompletionQueue cq = domain.openCompletionQueue(16);
            AddressVector av = domain.openAddressVector(2);
            Endpoint ep = domain.openEndpoint(cq, av);
            var e = assertThrows(IllegalStateException.class, cq::close);
            assertTrue(e.getMessage().contains("close the endpoint first"), e.getMessage());
            assertThrows(IllegalStateException.class, av::close);
            assertTrue(cq.isOpen() && ep.isOpen());
            ep.close();
            cq.close();
            av.close();
        } // the fabric closes the domain
    }

    @Test
    void fabricClosesEverythingUnderIt() {
        InfoList infos = Libfabric.getinfo(Peer.hints("shm"));
        Fabric fabric = Fabric.open(infos.first());
        infos.close(); // the fabric keeps its own copy of the info
        assertThrows(ClosedException.class, () -> Fabric.open(infos.get(0)));
        try (Arena arena = Arena.ofShared()) {
            Domain d1 = fabric.openDomain();
            Domain d2 = fabric.openDomain();
            CompletionQueue cq = d1.openCompletionQueue(8);
            Endpoint ep = d1.openEndpoint(cq, d1.openAddressVector(1));
            MemoryRegion mr = d2.register(arena.allocate(64));
            fabric.close();
            assertFalse(d1.isOpen() || d2.isOpen() || cq.isOpen() || ep.isOpen() || mr.isOpen());
        }
    }

    /**
     * 10,000 cycles of a domain with a completion queue, an address vector and a memory region on shm, then 300 more
     * that also open an endpoint. An shm endpoint creates and maps its own shared-memory region (about 10 ms each
     * here), so 10,000 of them would take minutes of CI time without exercising any other code path; 300 cycles would
     * still show any per-endpoint descriptor leak. The fabric is opened once: fi_fabric loads providers, process-wide
     * state rather than a per-object handle.
     */
    @Test
    void tenThousandOpenCloseCyclesLeakNoFileDescriptors() throws IOException {
        try (InfoList infos = Libfabric.getinfo(Peer.hints("shm"));
                Fabric fabric = Fabric.open(infos.first());
                Arena arena = Arena.ofShared()) {
            MemorySegment buffer = arena.allocate(4096);
            cycle(fabric, buffer, 20, true); // warm up lazily created provider state
            long before = openFds();
            cycle(fabric, buffer, 10_000, false);
            cycle(fabric, buffer, 300, true);
            long after = openFds();
            assertEquals(before, after, "file descriptors before and after the cycles");
        }
    }

    private static void cycle(Fabric fabric, MemorySegment buffer, int n, boolean withEndpoint) {
        for (int i = 0; i < n; i++) {
            try (Domain d = fabric.openDomain()) {
                CompletionQueue cq = d.openCompletionQueue(8);
                AddressVector av = d.openAddressVector(1);
                MemoryRegion mr = d.register(buffer);
                Endpoint ep = withEndpoint ? d.openEndpoint(cq, av) : null;
                if (i % 2 == 0) { // half explicitly, children first; the other half through the domain
                    if (ep != null) {
                        ep.close();
                    }
                    mr.close();
                    cq.close();
                }
            }
        }
    }

    private static long openFds() throws IOException {
        try (Stream<Path> s = Files.list(Path.of("/proc/self/fd"))) {
            return s.count();
        }
    }
}
