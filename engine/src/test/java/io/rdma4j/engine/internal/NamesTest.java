package io.rdma4j.engine.internal;

import static org.junit.jupiter.api.Assertions.assertDoesNotThrow;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class NamesTest {
    @Test
    void everyEngineAndBufferNameThatPassesFitsTheDirectoryAsOwnerSlashBuffer() {
        String longest = "a" + "b".repeat(62);
        assertTrue(Names.valid(longest));
        assertTrue(Names.valid("rollout-0.rank:3@host_1"));
        String wire = Names.wire(longest, longest);
        assertTrue(io.rdma4j.rendezvous.internal.Validation.isValidName(wire), wire.length() + " characters");
        assertTrue(io.rdma4j.rendezvous.internal.Validation.isValidName(Names.inbox(longest)));
    }

    @Test
    void rejectsSlashesOverlongAndBadFirstCharacters() {
        assertFalse(Names.valid("a/b"), "'/' separates owner and buffer in the directory");
        assertFalse(Names.valid("a".repeat(64)));
        assertFalse(Names.valid("-a"));
        assertFalse(Names.valid(""));
        assertFalse(Names.valid(null));
        assertThrows(io.rdma4j.InvalidArgumentException.class, () -> Names.check("buffer", "x/y"));
        assertDoesNotThrow(() -> Names.check("engine", "trainer"));
    }
}
