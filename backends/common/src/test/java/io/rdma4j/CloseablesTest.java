package io.rdma4j;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import org.junit.jupiter.api.Test;

class CloseablesTest {
    private final List<String> closed = new ArrayList<>();

    private AutoCloseable ok(String name) {
        return () -> closed.add(name);
    }

    private AutoCloseable failing(String name, Exception e) {
        return () -> {
            closed.add(name);
            throw e;
        };
    }

    @Test
    void closesEveryResourceInOrder() {
        Closeables.closeAll(ok("a"), ok("b"), ok("c"));
        assertEquals(List.of("a", "b", "c"), closed);
    }

    @Test
    void skipsNullsAndNullCollections() {
        Closeables.closeAll(ok("a"), null, ok("b"));
        Closeables.closeAll(Arrays.asList(null, ok("c")));
        assertDoesNotThrow(() -> Closeables.closeAll((AutoCloseable[]) null));
        assertDoesNotThrow(() -> Closeables.closeAll((Iterable<AutoCloseable>) null));
        assertEquals(List.of("a", "b", "c"), closed);
    }

    @Test
    void aFailingFirstResourceIsThrownAndTheOthersStillClose() {
        IllegalStateException first = new IllegalStateException("first");
        IllegalStateException thrown = assertThrows(
                IllegalStateException.class, () -> Closeables.closeAll(failing("a", first), ok("b"), ok("c")));
        assertSame(first, thrown);
        assertEquals(0, thrown.getSuppressed().length);
        assertEquals(List.of("a", "b", "c"), closed);
    }

    @Test
    void manyFailuresKeepTheFirstAndSuppressTheRestInOrder() {
        RuntimeException first = new Rdma4jException("first");
        RuntimeException second = new IllegalStateException("second");
        Exception third = new IOException("third");
        RuntimeException thrown = assertThrows(
                RuntimeException.class,
                () -> Closeables.closeAll(
                        List.of(ok("a"), failing("b", first), failing("c", second), ok("d"), failing("e", third))));
        assertSame(first, thrown);
        assertArrayEquals(new Throwable[] {second, third}, thrown.getSuppressed());
        assertEquals(List.of("a", "b", "c", "d", "e"), closed);
    }

    @Test
    void anErrorIsThrownAsItIs() {
        AssertionError error = new AssertionError("boom");
        AssertionError thrown = assertThrows(
                AssertionError.class,
                () -> Closeables.closeAll(
                        () -> {
                            throw error;
                        },
                        failing("b", new IllegalStateException("later"))));
        assertSame(error, thrown);
        assertEquals(1, thrown.getSuppressed().length);
    }

    @Test
    void aCheckedFirstFailureIsWrappedUnchecked() {
        IOException io = new IOException("socket");
        UncheckedIOException u = assertThrows(UncheckedIOException.class, () -> Closeables.closeAll(failing("a", io)));
        assertSame(io, u.getCause());
        Exception other = new Exception("other");
        Rdma4jException r = assertThrows(Rdma4jException.class, () -> Closeables.closeAll(failing("b", other)));
        assertSame(other, r.getCause());
    }

    @Test
    void anInterruptedCloseKeepsTheInterrupt() {
        assertThrows(Rdma4jException.class, () -> Closeables.closeAll(failing("a", new InterruptedException())));
        assertTrue(Thread.interrupted(), "the interrupt status is restored");
    }

    @Test
    void closeAllIntoAddsEveryCloseFailureToTheOriginalFailure() {
        RuntimeException cause = new IllegalStateException("open failed");
        RuntimeException a = new IllegalStateException("a");
        Exception c = new IOException("c");
        RuntimeException back = Closeables.closeAllInto(cause, failing("a", a), ok("b"), null, failing("c", c));
        assertSame(cause, back);
        assertArrayEquals(new Throwable[] {a, c}, cause.getSuppressed());
        assertEquals(List.of("a", "b", "c"), closed);
    }

    @Test
    void closeAllIntoWithNothingFailingLeavesTheFailureAsItWas() {
        Error e = new AssertionError("x");
        assertSame(e, Closeables.closeAllInto(e, List.of(ok("a"))));
        assertEquals(0, e.getSuppressed().length);
        assertThrows(NullPointerException.class, () -> Closeables.closeAllInto(null, ok("b")));
    }

    @Test
    void aResourceRethrowingTheFailureDoesNotSuppressItself() {
        RuntimeException cause = new IllegalStateException("open failed");
        Closeables.closeAllInto(cause, (AutoCloseable) () -> {
            throw cause;
        });
        assertEquals(0, cause.getSuppressed().length);
    }
}
