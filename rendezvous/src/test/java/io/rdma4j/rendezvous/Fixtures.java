package io.rdma4j.rendezvous;

import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.TimeUnit;

/** Peers, lanes and buffers for tests. */
final class Fixtures {
    private Fixtures() {}

    static QpInfo qp(long qpNum) {
        byte[] gid = new byte[16];
        gid[10] = (byte) 0xff;
        gid[11] = (byte) 0xff;
        gid[12] = 127;
        gid[15] = 1;
        return new QpInfo(qpNum, 0x123456, 0, gid, 1, 5);
    }

    static LaneInfo ibverbsLane(int index, long qpNum) {
        return LaneInfo.ibverbs(index, "mlx5_" + index, "0000:3b:00." + index, 0, qp(qpNum));
    }

    static LaneInfo fabricLane(int index) {
        return LaneInfo.libfabric(index, "tcp;ofi_rxm", "lo", null, -1, new byte[] {2, 0, 0x1f, 0x40, 127, 0, 0, 1});
    }

    static PeerInfo peer(String name, int lanes) {
        List<LaneInfo> l = new java.util.ArrayList<>();
        for (int i = 0; i < lanes; i++) {
            l.add(i % 2 == 0 ? ibverbsLane(i, 100 + i) : fabricLane(i));
        }
        return new PeerInfo(name, "127.0.0.1:9999", "host-" + name, 42, l);
    }

    static BufferInfo buffer(String name, int lanes) {
        List<LaneKey> keys = new java.util.ArrayList<>();
        for (int i = 0; i < lanes; i++) {
            keys.add(new LaneKey(i, 0x7f00_0000_0000L + i * 4096L, 0x1000 + i));
        }
        return BufferInfo.of(name, 1 << 20, MemoryKind.HOST, Locality.host(0), 1, keys);
    }

    static String uniqueName(String prefix) {
        return prefix + "-" + UUID.randomUUID();
    }

    /** Takes the next element, failing (not hanging) when none arrives in a generous bound. */
    static <T> T next(BlockingQueue<T> q) throws InterruptedException {
        T t = q.poll(10, TimeUnit.SECONDS);
        if (t == null) {
            throw new AssertionError("nothing arrived within 10 s");
        }
        return t;
    }

    static final Duration LEASE = Duration.ofSeconds(60);

    /**
     * Call deadline of test clients: generous, because a cold JVM's first TLS connection on a loaded two-core machine
     * can take longer than the 5 s default. Deadlines are not what these tests check.
     */
    static final Duration CALL_TIMEOUT = Duration.ofSeconds(30);

    static Rendezvous client(String target, Security security) {
        return Rendezvous.connect(target, security, CALL_TIMEOUT);
    }

    static Rendezvous client(String target, String token) {
        return client(target, token == null ? Security.none() : Security.token(token));
    }

    static HandshakeClient handshakeClient(String address, Security security) {
        return HandshakeClient.connect(address, security, CALL_TIMEOUT);
    }
}
