package io.rdma4j.perf;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.rdma4j.BackendUnavailableException;
import io.rdma4j.engine.Access;
import io.rdma4j.engine.LocalBuffer;
import io.rdma4j.engine.Plan;
import io.rdma4j.engine.PlanLane;
import io.rdma4j.engine.RemoteBuffer;
import io.rdma4j.engine.TransferEngine;
import io.rdma4j.engine.TransferOptions;
import io.rdma4j.engine.TransferResult;
import io.rdma4j.engine.UnknownPeerException;
import io.rdma4j.engine.spi.EngineBackendProvider;
import io.rdma4j.rendezvous.Backend;
import io.rdma4j.rendezvous.LaneInfo;
import io.rdma4j.rendezvous.PeerInfo;
import io.rdma4j.rendezvous.Rendezvous;
import io.rdma4j.rendezvous.Security;
import java.lang.foreign.Arena;
import java.util.List;
import java.util.ServiceLoader;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/**
 * A backend the engine has never heard of works end to end: two engines on the no-op backend, found through
 * ServiceLoader and announced through the embedded directory, resolve each other and complete a write. The no-op
 * backend moves no bytes, so what is checked is what it can show: the write completes, its plan runs on the noop lanes,
 * and the directory announces each lane with backend id {@code noop}.
 */
class NoopBackendEndToEndTest {
    private static final long PID = ProcessHandle.current().pid();

    @Test
    void isFoundThroughServiceLoader() {
        assertTrue(ServiceLoader.load(EngineBackendProvider.class).stream()
                .map(ServiceLoader.Provider::get)
                .anyMatch(p -> p.name().equals("noop")));
    }

    @Test
    void twoEnginesOnAThirdBackendResolveEachOtherAndCompleteAWrite() throws Exception {
        try (Arena arena = Arena.ofShared();
                TransferEngine a = TransferEngine.builder()
                        .name("noop-a-" + PID)
                        .backend("noop")
                        .lanesPerNic(2)
                        .build();
                TransferEngine b = TransferEngine.builder()
                        .name("noop-b-" + PID)
                        .backend("noop")
                        .lanesPerNic(2)
                        .build()) {
            b.publish("sink", b.register(arena.allocate(1 << 20, 4096)), Access.anyPeer());
            LocalBuffer src = a.register(arena.allocate(1 << 20, 4096));
            RemoteBuffer dst = a.peer(b.name()).buffer("sink");

            Plan plan = a.explain(src, 0, dst, 0, 1 << 20);
            assertFalse(plan.lanes().isEmpty(), plan.toText());
            for (PlanLane l : plan.lanes()) {
                assertTrue(l.localNic().startsWith("noop"), plan.toText());
                assertTrue(l.remoteNic().startsWith("noop"), plan.toText());
            }
            TransferResult r = a.write(src, 0, dst, 0, 1 << 20, TransferOptions.DEFAULT)
                    .future()
                    .get(30, TimeUnit.SECONDS);
            assertEquals(1 << 20, r.bytes());

            try (Rendezvous directory = Rendezvous.connect(Rendezvous.embeddedTarget(), Security.none())) {
                PeerInfo seen = directory.resolve(b.name()).orElseThrow();
                assertEquals(2, seen.lanes().size());
                assertEquals(
                        List.of("noop"),
                        seen.lanes().stream()
                                .map(LaneInfo::backendId)
                                .distinct()
                                .toList());
                assertEquals(
                        List.of(Backend.OTHER),
                        seen.lanes().stream().map(LaneInfo::backend).distinct().toList());
            }
        }
    }

    @Test
    void refusesAPeerOnAnotherBackendNamingBothIds() {
        try (TransferEngine noop = TransferEngine.builder()
                        .name("noop-c-" + PID)
                        .backend("noop")
                        .build();
                TransferEngine tcp = tcpOrSkip()) {
            UnknownPeerException e = assertThrows(UnknownPeerException.class, () -> noop.peer(tcp.name()));
            assertTrue(
                    e.getMessage().contains("it runs [libfabric (tcp;ofi_rxm)], this engine runs noop"),
                    e.getMessage());
            UnknownPeerException back = assertThrows(UnknownPeerException.class, () -> tcp.peer(noop.name()));
            assertTrue(
                    back.getMessage().contains("it runs [noop], this engine runs libfabric (tcp;ofi_rxm)"),
                    back.getMessage());
        }
    }

    private static TransferEngine tcpOrSkip() {
        try {
            return TransferEngine.builder()
                    .name("noop-tcp-" + PID)
                    .backend("libfabric")
                    .provider("tcp")
                    .nicFilter("lo")
                    .build();
        } catch (BackendUnavailableException e) {
            Assumptions.abort("libfabric's tcp provider is not available here: " + e.getMessage());
            throw e;
        }
    }
}
