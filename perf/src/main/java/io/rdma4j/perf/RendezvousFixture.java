package io.rdma4j.perf;

import io.grpc.CallOptions;
import io.grpc.Grpc;
import io.grpc.InsecureChannelCredentials;
import io.grpc.InsecureServerCredentials;
import io.grpc.ManagedChannel;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerServiceDefinition;
import io.grpc.stub.ClientCalls;
import io.grpc.stub.ServerCalls;
import io.rdma4j.rendezvous.Announcement;
import io.rdma4j.rendezvous.BufferInfo;
import io.rdma4j.rendezvous.DirectoryServer;
import io.rdma4j.rendezvous.LaneInfo;
import io.rdma4j.rendezvous.LaneKey;
import io.rdma4j.rendezvous.Locality;
import io.rdma4j.rendezvous.MemoryKind;
import io.rdma4j.rendezvous.PeerInfo;
import io.rdma4j.rendezvous.QpInfo;
import io.rdma4j.rendezvous.Rendezvous;
import io.rdma4j.rendezvous.Security;
import io.rdma4j.rendezvous.internal.RawBytes;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

/**
 * A populated directory over loopback TCP with a token (peers with four lanes each, buffers with per-lane keys, every
 * tenth buffer restricted to one peer), plus the baseline: a bare gRPC echo server with no protobuf, validation or
 * authentication, returning a payload the size of a resolved peer.
 */
final class RendezvousFixture implements AutoCloseable {
    static final String TOKEN = "bench-token";
    static final int LANES = 4;

    final DirectoryServer directory;
    final Rendezvous client;
    final List<Announcement> announcements = new ArrayList<>();
    final int peers;
    final int buffers;
    final Server echoServer;
    final ManagedChannel echoChannel;
    final byte[] echoPayload;
    final long populateNanos;

    private static final MethodDescriptor.Marshaller<byte[]> BYTES = RawBytes.MARSHALLER;
    static final MethodDescriptor<byte[], byte[]> ECHO = MethodDescriptor.<byte[], byte[]>newBuilder()
            .setType(MethodDescriptor.MethodType.UNARY)
            .setFullMethodName("bench.Echo/Echo")
            .setRequestMarshaller(BYTES)
            .setResponseMarshaller(BYTES)
            .build();

    static String peerName(int i) {
        return "peer-" + i;
    }

    static String bufferName(int i) {
        return "buffer-" + i;
    }

    static PeerInfo peer(int i) {
        List<LaneInfo> lanes = new ArrayList<>();
        byte[] gid = new byte[16];
        gid[10] = (byte) 0xff;
        gid[11] = (byte) 0xff;
        gid[12] = 10;
        gid[15] = (byte) i;
        for (int l = 0; l < LANES; l++) {
            lanes.add(LaneInfo.ibverbs(
                    l,
                    "mlx5_" + l,
                    String.format("0000:%02x:00.0", 0x10 + l),
                    l / 2,
                    new QpInfo(i * 16L + l, 4242, 0, gid, 1, 5)));
        }
        return new PeerInfo(peerName(i), "10.0." + (i / 250) + "." + (i % 250) + ":7000", "host-" + i, 1, lanes);
    }

    static BufferInfo buffer(int i, int peers) {
        List<LaneKey> keys = new ArrayList<>();
        for (int l = 0; l < LANES; l++) {
            keys.add(new LaneKey(l, 0x7f00_0000_0000L + i * (1L << 20), 0x10000 + i * LANES + l));
        }
        BufferInfo b = BufferInfo.of(bufferName(i), 1 << 20, MemoryKind.HOST, Locality.host(0), 1, keys);
        return i % 10 == 0 ? b.withAccess(Set.of(peerName((i + 1) % peers))) : b;
    }

    RendezvousFixture(int peers, int buffers) {
        this(peers, buffers, null);
    }

    /** @param store where the directory keeps its state ({@code etcd://...}), or null for its own memory */
    RendezvousFixture(int peers, int buffers, String store) {
        this.peers = peers;
        this.buffers = buffers;
        DirectoryServer.Builder builder =
                DirectoryServer.builder().bindAddress("127.0.0.1").security(Security.token(TOKEN));
        if (store != null) {
            builder.store(store);
        }
        directory = builder.start();
        // a generous deadline: the first calls of a fresh JVM load Netty and connect, which is slow on a busy machine
        client = Rendezvous.connect(directory.target(), Security.token(TOKEN), Duration.ofSeconds(30));
        long t0 = System.nanoTime();
        // Peers announce and publish concurrently, as a cluster starting up does.
        java.util.concurrent.ExecutorService pool = java.util.concurrent.Executors.newFixedThreadPool(8);
        try {
            List<java.util.concurrent.Future<Announcement>> announced = new ArrayList<>();
            for (int i = 0; i < peers; i++) {
                PeerInfo p = peer(i);
                announced.add(pool.submit(() -> client.announce(p, Duration.ofMinutes(5))));
            }
            for (var a : announced) {
                announcements.add(a.get());
            }
            List<java.util.concurrent.Future<?>> published = new ArrayList<>();
            for (int i = 0; i < buffers; i++) {
                int b = i;
                published.add(pool.submit(() -> announcements.get(b % peers).publish(buffer(b, peers))));
            }
            for (var f : published) {
                f.get();
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while populating the directory", e);
        } catch (java.util.concurrent.ExecutionException e) {
            throw new IllegalStateException("populating the directory failed: " + e.getCause(), e.getCause());
        } finally {
            pool.shutdownNow();
        }
        populateNanos = System.nanoTime() - t0;
        echoPayload = io.rdma4j.rendezvous.internal.Wire.toProto(peer(0)).toByteArray();
        ServerServiceDefinition echo = ServerServiceDefinition.builder("bench.Echo")
                .addMethod(ECHO, ServerCalls.asyncUnaryCall((req, out) -> {
                    out.onNext(req);
                    out.onCompleted();
                }))
                .build();
        try {
            echoServer = io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder.forAddress(
                            new InetSocketAddress("127.0.0.1", 0), InsecureServerCredentials.create())
                    .addService(echo)
                    .build()
                    .start();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        echoChannel = Grpc.newChannelBuilder("127.0.0.1:" + echoServer.getPort(), InsecureChannelCredentials.create())
                .build();
    }

    /** The baseline call: a bare gRPC unary round trip carrying a resolved peer's bytes each way. */
    /** Resolves peer {@code i} through the public API. */
    PeerInfo resolve(int i) {
        return client.resolve(peerName(i % peers)).orElseThrow();
    }

    /**
     * Looks up buffer {@code i}: restricted ones (every tenth) as the peer on their access list, the rest anonymously.
     */
    BufferInfo lookup(int i) {
        int b = i % buffers;
        return b % 10 == 0
                ? announcements.get((b + 1) % peers).lookup(bufferName(b)).orElseThrow()
                : client.lookup(bufferName(b)).orElseThrow();
    }

    byte[] echo() {
        return ClientCalls.blockingUnaryCall(
                echoChannel, ECHO, CallOptions.DEFAULT.withDeadlineAfter(5, TimeUnit.SECONDS), echoPayload);
    }

    @Override
    public void close() {
        echoChannel.shutdownNow();
        echoServer.shutdownNow();
        for (Announcement a : announcements) {
            a.close();
        }
        client.close();
        directory.close();
    }
}
