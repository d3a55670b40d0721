package io.rdma4j.libfabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.DeviceRegistrationException;
import io.rdma4j.libfabric.ffi.FabricH;
import io.rdma4j.libfabric.ffi.FiDomainH;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * {@code fi_mr_regattr} against the real libfabric 1.17 here: host memory ({@code FI_HMEM_SYSTEM}) registers and an RMA
 * write lands through the region; CUDA memory ({@code FI_HMEM_CUDA}) is refused before the call because neither tcp nor
 * shm of this build offers {@code FI_HMEM}, and the raw call shows what the provider itself answers
 * ({@code -FI_ENOSYS}: libfabric's CUDA interface is not initialized).
 */
class HmemRegistrationTest {
    @BeforeAll
    static void libfabricPresent() {
        Libfabric.ensureAvailable();
    }

    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp"})
    void hostMemoryRegisteredByRegattrCarriesAnRmaWrite(String provider) {
        try (InfoList infos = Libfabric.getinfo(Peer.hints(provider));
                Arena arena = Arena.ofShared()) {
            Info info = infos.first();
            try (Peer initiator = new Peer(info, 1 << 20);
                    Peer target = new Peer(info, 4096)) {
                MemorySegment landing = arena.allocate(1 << 20, 4096);
                MemoryRegion mr = target.domain.registerAttr(landing, Domain.ACCESS_ALL);
                assertEquals(FiDomainH.FI_HMEM_SYSTEM, mr.iface());
                assertEquals(landing.address(), mr.segment().address());
                long peer = initiator.av.insert(target.ep.name());
                target.av.insert(initiator.ep.name());
                RmaTest.fill(initiator.buffer, 1 << 20, 5);
                Peer.post(
                        initiator,
                        target,
                        () -> initiator.ep.writeData(initiator.mr, 0, 1 << 20, 77, peer, mr.remote(), 0, 3));
                Peer.progressUntil(
                        initiator,
                        target,
                        () -> target.remoteData.contains(77L) && initiator.contexts.contains(3L),
                        "writedata");
                RmaTest.verify(landing, 0, 1 << 20, 5);
                mr.close();
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp"})
    void cudaMemoryOnAProviderWithoutHmemIsRefusedBeforeTheCall(String provider) {
        try (InfoList infos = Libfabric.getinfo(Peer.hints(provider));
                Arena arena = Arena.ofShared()) {
            Info info = infos.first();
            Assumptions.assumeTrue((info.caps() & FabricH.FI_HMEM) == 0, provider + " offers FI_HMEM in this build");
            try (Fabric fabric = Fabric.open(info)) {
                Domain domain = fabric.openDomain();
                MemorySegment memory = arena.allocate(4096, 4096);
                var e = assertThrows(
                        DeviceRegistrationException.class,
                        () -> domain.registerCuda(memory.address(), 4096, 0, Domain.ACCESS_ALL));
                String m = e.getMessage();
                assertTrue(
                        m.contains("does not offer FI_HMEM")
                                && m.contains(info.provider())
                                && m.contains("libfabric " + Libfabric.versionString()),
                        m);
                assertTrue(
                        m.contains("(FI_MR_DMABUF) needs libfabric 1.20 or newer, and this process loaded "
                                + Libfabric.versionString()),
                        m);
                assertEquals(m, domain.hmemUnsupported("CUDA"));
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"shm", "tcp"})
    void theRawCallCarriesTheProvidersOwnErrorForCuda(String provider) {
        try (InfoList infos = Libfabric.getinfo(Peer.hints(provider));
                Arena arena = Arena.ofShared()) {
            Info info = infos.first();
            Assumptions.assumeTrue((info.caps() & FabricH.FI_HMEM) == 0, provider + " offers FI_HMEM in this build");
            try (Fabric fabric = Fabric.open(info)) {
                Domain domain = fabric.openDomain();
                MemorySegment memory = arena.allocate(4096, 4096);
                var e = assertThrows(
                        FabricException.class,
                        () -> domain.registerAttr(
                                memory.address(), 4096, Domain.ACCESS_ALL, FiDomainH.FI_HMEM_CUDA, 0));
                assertEquals("fi_mr_regattr", e.function());
                assertTrue(
                        e.getMessage().startsWith("fi_mr_regattr(iface=FI_HMEM_CUDA, device=0, addr=0x"),
                        e.getMessage());
                assertTrue(e.getMessage().contains("cannot register FI_HMEM_CUDA memory"), e.getMessage());
                // util_mr's answer when the CUDA hmem interface is not initialized: -FI_ENOSYS
                assertEquals(38, e.code(), e.getMessage());
            }
        }
    }

    @ParameterizedTest
    @ValueSource(strings = {"shm"})
    void regattrArgumentsAreCheckedInJava(String provider) {
        try (InfoList infos = Libfabric.getinfo(Peer.hints(provider));
                Fabric fabric = Fabric.open(infos.first())) {
            Domain domain = fabric.openDomain();
            assertThrows(
                    IllegalArgumentException.class,
                    () -> domain.registerAttr(0, 4096, Domain.ACCESS_ALL, FiDomainH.FI_HMEM_CUDA, 0));
            assertThrows(
                    IllegalArgumentException.class,
                    () -> domain.registerAttr(4096, 0, Domain.ACCESS_ALL, FiDomainH.FI_HMEM_CUDA, 0));
            assertThrows(
                    IllegalArgumentException.class, () -> domain.registerAttr(4096, 4096, Domain.ACCESS_ALL, 9, 0));
            assertThrows(
                    IllegalArgumentException.class,
                    () -> domain.registerAttr(4096, 4096, Domain.ACCESS_ALL, FiDomainH.FI_HMEM_CUDA, -1));
            assertThrows(
                    IllegalArgumentException.class,
                    () -> domain.registerAttr(4096, 4096, Domain.ACCESS_ALL, FiDomainH.FI_HMEM_SYSTEM, 0));
            assertThrows(
                    IllegalArgumentException.class,
                    () -> domain.registerAttr(MemorySegment.ofArray(new byte[8]), Domain.ACCESS_ALL));
        }
    }
}
