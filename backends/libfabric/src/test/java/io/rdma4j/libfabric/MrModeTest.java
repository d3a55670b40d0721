package io.rdma4j.libfabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.libfabric.ffi.FabricH;
import io.rdma4j.libfabric.ffi.Fi;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Which {@code mr_mode} bits the binding honours, proven where a provider here asks for them: shm of libfabric 1.17 has
 * a variant that requires {@code FI_MR_HMEM}, and bytes move through it. The bits no provider here can exercise
 * ({@code FI_MR_ENDPOINT}, {@code FI_MR_RAW}, ...) are refused by name, in the hints and when opening a fabric.
 */
class MrModeTest {
    @BeforeAll
    static void libfabricPresent() {
        Libfabric.ensureAvailable();
    }

    @Test
    void defaultHintsOfferFiMrHmemAndBytesMoveThroughAProviderThatRequiresIt() {
        try (InfoList infos = Libfabric.getinfo(Hints.rdm().provider("shm"))) {
            Info info = infos.stream()
                    .filter(i -> (i.mrMode() & FabricH.FI_MR_HMEM) != 0)
                    .findFirst()
                    .orElse(null);
            // shm 1.17 answers an offer of FI_MR_HMEM with a variant that requires it; without the offer it is absent
            assertNotNull(info, "shm offers a variant requiring FI_MR_HMEM when it is offered: " + infos);
            assertEquals(0, info.mrMode() & ~Hints.SUPPORTED_MR_MODE, Info.mrModeToString(info.mrMode()));
            try (Peer a = new Peer(info, 1 << 20);
                    Peer b = new Peer(info, 1 << 20);
                    // FI_MR_HMEM: memory registered through fi_mr_regattr with its iface, as device memory must be
                    MemoryRegion attrRegion =
                            a.domain.registerAttr(a.arena.allocate(1 << 16, 4096), Domain.ACCESS_ALL)) {
                long peer = a.av.insert(b.ep.name());
                long back = b.av.insert(a.ep.name());
                RemoteRegion remote = b.mr.remote();
                MemorySegment src = attrRegion.segment();
                for (int i = 0; i < 4096; i++) {
                    src.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 13 + 1));
                }
                Peer.post(a, b, () -> a.ep.writeData(attrRegion, 0, 4096, 77, peer, remote, 8192, 1));
                Peer.progressUntil(
                        a,
                        b,
                        () -> b.remoteData.contains(77L) && a.contexts.contains(1L),
                        "writedata from a regattr region");
                assertEquals(-1, src.asSlice(0, 4096).mismatch(b.buffer.asSlice(8192, 4096)));

                // read back into the fi_mr_reg region, then a message into a posted receive; each passes its desc
                Peer.post(a, b, () -> a.ep.read(a.mr, 0, 4096, peer, remote, 8192, 2));
                Peer.progressUntil(a, b, () -> a.contexts.contains(2L), "read");
                assertEquals(-1, src.asSlice(0, 4096).mismatch(a.buffer.asSlice(0, 4096)));
                Peer.post(a, b, () -> b.ep.recv(b.mr, 65536, 4096, back, 3));
                Peer.post(a, b, () -> a.ep.send(attrRegion, 0, 4096, peer, 4));
                Peer.progressUntil(a, b, () -> b.contexts.contains(3L) && a.contexts.contains(4L), "send");
                assertEquals(-1, src.asSlice(0, 4096).mismatch(b.buffer.asSlice(65536, 4096)));
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "FI_MR_ENDPOINT,fi_mr_bind and fi_mr_enable",
        "FI_MR_RAW,fi_mr_raw_attr and fi_mr_map_raw",
        "FI_MR_RMA_EVENT,fi_mr_bind to a counter",
        "FI_MR_MMU_NOTIFY,fi_mr_refresh",
        "FI_MR_COLLECTIVE,collective operations"
    })
    void hintsRefuseAnMrModeTheBindingDoesNotImplementAndSayWhatItWouldNeed(String bit, String need) throws Exception {
        int value = FabricH.class.getField(bit).getInt(null);
        var e = assertThrows(IllegalArgumentException.class, () -> Hints.rdm().mrMode(FabricH.FI_MR_LOCAL | value));
        String m = e.getMessage();
        assertTrue(
                m.startsWith("mr_mode FI_MR_LOCAL|" + bit + " cannot be offered: this binding does not implement " + bit
                        + " ("),
                m);
        assertTrue(m.contains(need), m);
        assertTrue(m.contains("It honours FI_MR_LOCAL|FI_MR_VIRT_ADDR|FI_MR_ALLOCATED|FI_MR_PROV_KEY|FI_MR_HMEM"), m);
    }

    @Test
    void hintsAcceptASubsetAndProvidersAnswerWithinIt() {
        int offered = FabricH.FI_MR_LOCAL | FabricH.FI_MR_VIRT_ADDR;
        try (InfoList infos = Libfabric.getinfo(Hints.rdm().provider("shm").mrMode(offered))) {
            assertTrue(!infos.isEmpty());
            for (Info i : infos) {
                assertEquals(0, i.mrMode() & ~offered, i.toString());
            }
        }
    }

    /**
     * A provider that requires {@code FI_MR_ENDPOINT} (none on this machine does) is refused before {@code fi_fabric}:
     * the info here is shm's, copied with {@code fi_dupinfo} and the bit set, as such a provider would answer a query
     * without hints.
     */
    @Test
    void fabricRefusesAnInfoThatRequiresFiMrEndpointBeforeOpeningAnything() throws Throwable {
        try (InfoList infos = Libfabric.getinfo(Hints.rdm().provider("shm"))) {
            long copy = (long) Fi.FI_DUPINFO.handle().invokeExact(infos.first().address());
            assertTrue(copy != 0, "fi_dupinfo");
            MemorySegment dom = MemorySegment.ofAddress(Fi.getLong(copy + FabricH.INFO_DOMAIN_ATTR))
                    .reinterpret(FabricH.FI_DOMAIN_ATTR.byteSize());
            int mrMode = dom.get(ValueLayout.JAVA_INT, FabricH.DOMAIN_MR_MODE);
            dom.set(ValueLayout.JAVA_INT, FabricH.DOMAIN_MR_MODE, mrMode | FabricH.FI_MR_ENDPOINT);
            try (InfoList forged = new InfoList(copy, Hints.none())) {
                Info info = forged.get(0);
                var e = assertThrows(IllegalArgumentException.class, () -> Fabric.open(info));
                assertEquals(
                        "provider shm on shm requires mr_mode FI_MR_VIRT_ADDR|FI_MR_ENDPOINT, but this binding"
                                + " does not implement FI_MR_ENDPOINT (FI_MR_ENDPOINT: each region bound to one endpoint with"
                                + " fi_mr_bind and fi_mr_enable, while regions here belong to the domain and serve all its"
                                + " endpoints). It honours"
                                + " FI_MR_LOCAL|FI_MR_VIRT_ADDR|FI_MR_ALLOCATED|FI_MR_PROV_KEY|FI_MR_HMEM:"
                                + " offer a subset of those, or use a provider that needs no more",
                        e.getMessage());
            }
        }
    }
}
