package io.rdma4j.engine.internal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ClosingTest {
    @Test
    void attemptsEveryStepThrowsTheFirstAndSuppressesTheRest() {
        List<String> ran = new ArrayList<>();
        IllegalStateException first = new IllegalStateException("first");
        IllegalArgumentException second = new IllegalArgumentException("second");
        IllegalStateException thrown = assertThrows(IllegalStateException.class, () -> Closing.closeAll(
                () -> ran.add("a"),
                () -> {
                    ran.add("b");
                    throw first;
                },
                null,
                () -> {
                    ran.add("c");
                    throw second;
                },
                () -> ran.add("d")));
        assertSame(first, thrown);
        assertEquals(List.of("a", "b", "c", "d"), ran);
        assertEquals(1, thrown.getSuppressed().length);
        assertSame(second, thrown.getSuppressed()[0]);
    }

    @Test
    void closesEachResourceOfACollectionEvenWhenOneFails() {
        List<String> closed = new ArrayList<>();
        List<AutoCloseable> resources = List.of(() -> closed.add("x"), () -> {
            throw new Exception("checked");
        }, () -> closed.add("z"));
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> Closing.closeAll(Closing.each(resources)));
        assertEquals("checked", e.getCause().getMessage());
        assertEquals(List.of("x", "z"), closed);
    }
}
