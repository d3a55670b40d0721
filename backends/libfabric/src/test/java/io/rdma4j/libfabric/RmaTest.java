package io.rdma4j.libfabric;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** write, writedata and read between two endpoints (each with its own fabric and domain) over real providers. */
class RmaTest {
    static final long MAX = 16L << 20;

    @BeforeAll
    static void libfabricPresent() {
        Libfabric.ensureAvailable();
    }

    static void fill(MemorySegment s, long n, int seed) {
        for (long i = 0; i < n; i++) {
            s.set(ValueLayout.JAVA_BYTE, i, (byte) (i * 31 + seed + (i >>> 12)));
        }
    }

    static void verify(MemorySegment s, long offset, long n, int seed) {
        for (long i = 0; i < n; i++) {
            byte want = (byte) (i * 31 + seed + (i >>> 12));
            byte got = s.get(ValueLayout.JAVA_BYTE, offset + i);
            if (want != got) {
                throw new AssertionError("byte " + i + " of " + n + ": expected " + want + " but was " + got);
            }
        }
    }

    @ParameterizedTest(name = "{0} {1} bytes")
    @CsvSource({"shm,1", "shm,4096", "shm,1048576", "shm,16777216", "tcp,1", "tcp,4096", "tcp,1048576", "tcp,16777216"})
    void writeDataWriteAndReadMoveVerifiedBytes(String provider, long size) {
        try (InfoList infos = Libfabric.getinfo(Peer.hints(provider))) {
            Info info = infos.first();
            try (Peer initiator = new Peer(info, MAX);
                    Peer target = new Peer(info, MAX)) {
                long peer = initiator.av.insert(target.ep.name());
                long back = target.av.insert(initiator.ep.name());
                assertEquals(0, peer);
                assertEquals(0, back);
                RemoteRegion remote = target.mr.remote();

                // writedata: the remote CQ data tells the target the bytes are in place
                fill(initiator.buffer, size, 1);
                long tag = 0x5eed0000L + size;
                Peer.post(
                        initiator,
                        target,
                        () -> initiator.ep.writeData(initiator.mr, 0, size, tag, peer, remote, 0, 11));
                Peer.progressUntil(
                        initiator,
                        target,
                        () -> !target.remoteData.isEmpty() && initiator.contexts.contains(11L),
                        "writedata");
                assertEquals(tag, target.remoteData.get(0));
                verify(target.buffer, 0, size, 1);

                // write at an offset, then a writedata as the visibility marker
                long off = MAX - size;
                fill(initiator.buffer, size, 2);
                Peer.post(initiator, target, () -> initiator.ep.write(initiator.mr, 0, size, peer, remote, off, 12));
                Peer.post(initiator, target, () -> initiator.ep.writeData(initiator.mr, 0, 1, 7, peer, remote, 0, 13));
                Peer.progressUntil(
                        initiator,
                        target,
                        () -> target.remoteData.size() == 2 && initiator.contexts.contains(12L),
                        "write");
                assertEquals(7L, target.remoteData.get(1));
                verify(target.buffer, off, size, 2);

                // read back what the target holds into a fresh part of the initiator's buffer
                fill(target.buffer, size, 3);
                initiator.buffer.asSlice(0, size).fill((byte) 0);
                Peer.post(initiator, target, () -> initiator.ep.read(initiator.mr, 0, size, peer, remote, 0, 14));
                Peer.progressUntil(initiator, target, () -> initiator.contexts.contains(14L), "read");
                verify(initiator.buffer, 0, size, 3);
                assertTrue(initiator.remoteData.isEmpty());
            }
        }
    }

    @ParameterizedTest(name = "{0}")
    @CsvSource({"shm", "tcp"})
    void writeMsgPutsEachScatteredPieceWhereItIsNamed(String provider) {
        try (InfoList infos = Libfabric.getinfo(Peer.hints(provider))) {
            Info info = infos.first();
            try (Peer initiator = new Peer(info, MAX);
                    Peer target = new Peer(info, MAX)) {
                long peer = initiator.av.insert(target.ep.name());
                target.av.insert(initiator.ep.name());
                RemoteRegion remote = target.mr.remote();
                int n = initiator.ep.vectorLimit();
                assertTrue(n >= 1 && n <= Endpoint.MAX_VECTOR, provider + " vector limit " + n);
                // pieces of different lengths, the local ones in reverse order of the remote ones, gaps between
                long[] lengths = new long[n];
                long[] local = new long[n];
                long[] far = new long[n];
                for (int i = 0; i < n; i++) {
                    lengths[i] = 4096L * (i + 1) + 7 * i;
                    local[i] = (1L << 19) * (n - i);
                    far[i] = (1L << 20) * i + 4096 * 3 + i;
                }
                fill(initiator.buffer, MAX, 4);
                Peer.post(
                        initiator,
                        target,
                        () -> initiator.ep.writeMsg(initiator.mr, local, far, lengths, 0, n, peer, remote, 21));
                Peer.post(initiator, target, () -> initiator.ep.writeData(initiator.mr, 0, 1, 9, peer, remote, 0, 22));
                Peer.progressUntil(
                        initiator,
                        target,
                        () -> !target.remoteData.isEmpty()
                                && initiator.contexts.contains(21L)
                                && initiator.contexts.contains(22L),
                        "writemsg");
                for (int i = 0; i < n; i++) {
                    assertTrue(
                            initiator
                                            .buffer
                                            .asSlice(local[i], lengths[i])
                                            .mismatch(target.buffer.asSlice(far[i], lengths[i]))
                                    == -1,
                            "piece " + i + " of " + n);
                    long gap = far[i] - 1;
                    assertEquals(0, target.buffer.get(ValueLayout.JAVA_BYTE, gap), "byte before piece " + i);
                }
                assertEquals(
                        2,
                        initiator.contexts.stream()
                                .filter(c -> c == 21L || c == 22L)
                                .count());
            }
        }
    }
}
