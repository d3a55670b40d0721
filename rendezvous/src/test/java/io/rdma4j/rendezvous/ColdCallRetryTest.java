package io.rdma4j.rendezvous;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.rdma4j.proto.v1.ResolveRequest;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A call whose deadline ran out before gRPC sent it (a cold JVM still loading gRPC on a loaded, emulated machine) is
 * made once more with a fresh deadline; a call the directory received and did not answer in time is not.
 */
class ColdCallRetryTest {
    private static final Duration TIMEOUT = Duration.ofSeconds(1);

    /**
     * Loads gRPC and starts the embedded directory with a generous deadline, so that only the test's calls are cold.
     */
    @BeforeAll
    static void warmUp() {
        try (Rendezvous r = Rendezvous.connect(Rendezvous.embeddedTarget(), Security.none(), Duration.ofSeconds(60))) {
            r.resolve(Fixtures.uniqueName("warm"));
        }
    }

    @Test
    void callThatNeverStartedIsMadeAgainWithAFreshDeadline() throws Exception {
        try (Rendezvous r = Rendezvous.connect(Rendezvous.embeddedTarget(), Security.none(), TIMEOUT)) {
            AtomicInteger attempts = new AtomicInteger();
            StatusRuntimeException e = assertThrows(
                    StatusRuntimeException.class,
                    () -> r.invoke(stub -> {
                        if (attempts.incrementAndGet() == 1) {
                            sleep(TIMEOUT.toMillis() + 200); // the deadline passes before the call is started
                        }
                        return stub.resolve(ResolveRequest.newBuilder()
                                .setName(Fixtures.uniqueName("cold"))
                                .build());
                    }));
            assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode(), "the directory answered the second try");
            assertEquals(2, attempts.get(), "one retry, after the call that never started");
        }
    }

    @Test
    void callThatNeverStartsTwiceFailsWithDeadlineExceeded() throws Exception {
        try (Rendezvous r = Rendezvous.connect(Rendezvous.embeddedTarget(), Security.none(), TIMEOUT)) {
            AtomicInteger attempts = new AtomicInteger();
            StatusRuntimeException e = assertThrows(
                    StatusRuntimeException.class,
                    () -> r.invoke(stub -> {
                        attempts.incrementAndGet();
                        sleep(TIMEOUT.toMillis() * 2);
                        return stub.resolve(
                                ResolveRequest.newBuilder().setName("x").build());
                    }));
            assertEquals(Status.Code.DEADLINE_EXCEEDED, e.getStatus().getCode());
            assertTrue(e.getStatus().getDescription().startsWith("ClientCall started after"), e.toString());
            assertEquals(2, attempts.get(), "a second try, then the failure");
        }
    }

    /** An in-process directory whose resolve answers NOT_FOUND after {@code delayMs}: a cold or busy server. */
    private static io.grpc.Server slowDirectory(String name, long delayMs) throws java.io.IOException {
        return io.grpc.inprocess.InProcessServerBuilder.forName(name)
                .addService(new io.rdma4j.proto.v1.DirectoryGrpc.DirectoryImplBase() {
                    @Override
                    public void resolve(
                            ResolveRequest request,
                            io.grpc.stub.StreamObserver<io.rdma4j.proto.v1.ResolveResponse> out) {
                        sleep(delayMs);
                        out.onError(Status.NOT_FOUND.asRuntimeException());
                    }
                })
                .build()
                .start();
    }

    @Test
    void callThatStartedWithLittleOfItsDeadlineLeftIsMadeAgain() throws Exception {
        String name = Fixtures.uniqueName("slow-dir");
        io.grpc.Server server = slowDirectory(name, 300);
        try (Rendezvous r = Rendezvous.connect("inproc:" + name, Security.none(), TIMEOUT)) {
            AtomicInteger attempts = new AtomicInteger();
            StatusRuntimeException e = assertThrows(
                    StatusRuntimeException.class,
                    () -> r.invoke(stub -> {
                        if (attempts.incrementAndGet() == 1) {
                            sleep(TIMEOUT.toMillis() - 150); // started with 150 ms left; the server needs 300
                        }
                        return stub.resolve(
                                ResolveRequest.newBuilder().setName("x").build());
                    }));
            assertEquals(Status.Code.NOT_FOUND, e.getStatus().getCode(), "the directory answered the second try");
            assertEquals(2, attempts.get(), "one retry, after the call that started late");
        } finally {
            server.shutdownNow();
        }
    }

    @Test
    void callThatHadItsWholeDeadlineIsNotMadeAgain() throws Exception {
        String name = Fixtures.uniqueName("slow-dir");
        io.grpc.Server server = slowDirectory(name, TIMEOUT.toMillis() + 500);
        try (Rendezvous r = Rendezvous.connect("inproc:" + name, Security.none(), TIMEOUT)) {
            AtomicInteger attempts = new AtomicInteger();
            StatusRuntimeException e = assertThrows(
                    StatusRuntimeException.class,
                    () -> r.invoke(stub -> {
                        attempts.incrementAndGet();
                        return stub.resolve(
                                ResolveRequest.newBuilder().setName("x").build());
                    }));
            assertEquals(Status.Code.DEADLINE_EXCEEDED, e.getStatus().getCode());
            assertEquals(1, attempts.get(), "the directory had its chance: no second try");
        } finally {
            server.shutdownNow();
        }
    }

    /**
     * A directory address that accepts the connection and never speaks HTTP/2 (a cold server, or one stalled before its
     * first frame): the call waits for a transport until its deadline and is never sent ({@code was_still_waiting} in
     * gRPC's message, as a cold guest JVM met it), so it is made once more; it fails again the same way.
     */
    @Test
    void callStillWaitingForItsConnectionIsMadeAgain() throws Exception {
        try (java.net.ServerSocket silent =
                        new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
                Rendezvous r = Rendezvous.connect("127.0.0.1:" + silent.getLocalPort(), Security.none(), TIMEOUT)) {
            java.util.List<java.net.Socket> accepted = new java.util.concurrent.CopyOnWriteArrayList<>();
            Thread acceptor = Thread.ofPlatform().daemon().start(() -> {
                try {
                    while (true) {
                        accepted.add(silent.accept()); // held open, never answered
                    }
                } catch (java.io.IOException e) {
                    // closed at the end of the test
                }
            });
            AtomicInteger attempts = new AtomicInteger();
            StatusRuntimeException e = assertThrows(
                    StatusRuntimeException.class,
                    () -> r.invoke(stub -> {
                        attempts.incrementAndGet();
                        return stub.resolve(
                                ResolveRequest.newBuilder().setName("x").build());
                    }));
            assertEquals(Status.Code.DEADLINE_EXCEEDED, e.getStatus().getCode(), e.toString());
            assertTrue(e.getStatus().getDescription().contains("was_still_waiting"), e.toString());
            assertEquals(2, attempts.get(), "a second try, then the failure");
            silent.close(); // ends the acceptor; the try closes it again, harmlessly
            acceptor.join(5000);
            for (java.net.Socket s : accepted) {
                s.close();
            }
        }
    }

    private static void sleep(long ms) {
        try {
            Thread.sleep(ms);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError(e);
        }
    }
}
