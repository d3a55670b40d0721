package io.rdma4j.rendezvous;

import static io.rdma4j.rendezvous.Fixtures.LEASE;
import static io.rdma4j.rendezvous.Fixtures.peer;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

/** {@link DirectoryTest} against an in-process directory. */
class InProcessDirectoryTest extends DirectoryTest {
    @Override
    DirectoryServer.Builder listen(DirectoryServer.Builder b) {
        return b.inProcess(Fixtures.uniqueName("dir"));
    }

    @Override
    Security security() {
        return Security.none();
    }

    @Test
    void embeddedDirectoryIsSharedWithinTheJvm() {
        String name = Fixtures.uniqueName("emb");
        try (Rendezvous one = Rendezvous.embedded();
                Rendezvous two = Rendezvous.embedded()) {
            assertTrue(Rendezvous.embeddedTarget().startsWith("inproc:"));
            try (Announcement a = one.announce(peer(name, 1), LEASE)) {
                assertEquals(peer(name, 1), two.resolve(name).orElseThrow());
            }
            assertFalse(two.resolve(name).isPresent());
        }
    }
}
