package io.rdma4j.engine;

import io.grpc.CallOptions;
import io.grpc.ClientCall;
import io.grpc.HandlerRegistry;
import io.grpc.ManagedChannel;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.Server;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.Status;
import io.grpc.inprocess.InProcessChannelBuilder;
import io.grpc.inprocess.InProcessServerBuilder;
import io.rdma4j.rendezvous.internal.RawBytes;
import java.io.IOException;
import java.util.ArrayDeque;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

/**
 * A fault injector in front of an in-process directory: it passes every call through, byte for byte, except that while
 * {@link #hold()} is on, the events of its Watch streams wait here (in order) until {@link #release()}. An engine that
 * reaches the directory through it hears of membership changes late, as one whose watch thread is starved does, while
 * its heartbeats and lookups go on.
 */
final class WatchHoldingDirectory implements AutoCloseable {
    private static final MethodDescriptor.Marshaller<byte[]> BYTES = RawBytes.MARSHALLER;

    private final String name;
    private final ManagedChannel upstream;
    private final Server server;
    private final List<Forwarded> watches = new CopyOnWriteArrayList<>();
    private volatile boolean holding;

    /** Forwards to the in-process directory named {@code directoryName}, under {@code name}. */
    WatchHoldingDirectory(String name, String directoryName) throws IOException {
        this.name = name;
        upstream = InProcessChannelBuilder.forName(directoryName).build();
        server = InProcessServerBuilder.forName(name)
                .fallbackHandlerRegistry(new HandlerRegistry() {
                    @Override
                    public ServerMethodDefinition<?, ?> lookupMethod(String method, String authority) {
                        MethodDescriptor<byte[], byte[]> m = MethodDescriptor.newBuilder(BYTES, BYTES)
                                .setFullMethodName(method)
                                .setType(MethodDescriptor.MethodType.UNKNOWN)
                                .build();
                        return ServerMethodDefinition.create(m, new Forward(m));
                    }
                })
                .build()
                .start();
    }

    /** {@return the target an engine's {@code directory(target, security)} takes} */
    String target() {
        return "inproc:" + name;
    }

    /** Watch events wait here from now on. */
    void hold() {
        holding = true;
    }

    /** Sends every event that waited, in order, and lets later ones through. */
    void release() {
        holding = false;
        for (Forwarded w : watches) {
            w.flush();
        }
    }

    @Override
    public void close() throws InterruptedException {
        server.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
        upstream.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
    }

    /** One call, forwarded to the directory. */
    private final class Forwarded extends ClientCall.Listener<byte[]> {
        private final ServerCall<byte[], byte[]> down;
        private final ClientCall<byte[], byte[]> up;
        private final boolean watch;
        private final Queue<byte[]> held = new ArrayDeque<>(); // guarded by this

        Forwarded(ServerCall<byte[], byte[]> down, ClientCall<byte[], byte[]> up, boolean watch) {
            this.down = down;
            this.up = up;
            this.watch = watch;
        }

        @Override
        public synchronized void onHeaders(Metadata headers) {
            down.sendHeaders(headers);
        }

        @Override
        public void onMessage(byte[] message) {
            synchronized (this) {
                if (watch && (holding || !held.isEmpty())) {
                    held.add(message);
                } else {
                    down.sendMessage(message);
                }
            }
            up.request(1);
        }

        synchronized void flush() {
            while (!held.isEmpty()) {
                down.sendMessage(held.poll());
            }
        }

        @Override
        public synchronized void onClose(Status status, Metadata trailers) {
            if (!holding) {
                flush();
            }
            down.close(status, trailers);
            watches.remove(this);
        }
    }

    /** Starts the upstream call for each call that arrives, and relays the caller's messages to it. */
    private final class Forward implements ServerCallHandler<byte[], byte[]> {
        private final MethodDescriptor<byte[], byte[]> method;

        Forward(MethodDescriptor<byte[], byte[]> method) {
            this.method = method;
        }

        @Override
        public ServerCall.Listener<byte[]> startCall(ServerCall<byte[], byte[]> call, Metadata headers) {
            ClientCall<byte[], byte[]> up = upstream.newCall(method, CallOptions.DEFAULT);
            Forwarded f = new Forwarded(call, up, "Watch".equals(method.getBareMethodName()));
            if (f.watch) {
                watches.add(f);
            }
            up.start(f, headers);
            up.request(1);
            call.request(1);
            return new ServerCall.Listener<>() {
                @Override
                public void onMessage(byte[] message) {
                    up.sendMessage(message);
                    call.request(1);
                }

                @Override
                public void onHalfClose() {
                    up.halfClose();
                }

                @Override
                public void onCancel() {
                    up.cancel("the caller cancelled", null);
                }
            };
        }
    }
}
