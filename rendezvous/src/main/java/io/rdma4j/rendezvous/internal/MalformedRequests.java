package io.rdma4j.rendezvous.internal;

import io.grpc.ForwardingServerCallListener;
import io.grpc.Metadata;
import io.grpc.MethodDescriptor;
import io.grpc.ServerCall;
import io.grpc.ServerCallHandler;
import io.grpc.ServerMethodDefinition;
import io.grpc.ServerServiceDefinition;
import io.grpc.Status;
import java.io.InputStream;

/**
 * Answers requests that do not parse as their protobuf type with {@code INVALID_ARGUMENT}. grpc-java reports a request
 * that fails to parse as {@code UNKNOWN} ("Application error processing RPC"), which blames the server; the parse
 * failure is the caller's. The request marshaller here returns {@code null} for unparseable bytes (remembering why on
 * the parsing thread, which is the thread that then delivers the message), and a listener in front of the service
 * closes the call instead of delivering it.
 */
final class MalformedRequests {
    private static final ThreadLocal<String> LAST_FAILURE = new ThreadLocal<>();

    private MalformedRequests() {}

    static ServerServiceDefinition guard(ServerServiceDefinition service) {
        ServerServiceDefinition.Builder b =
                ServerServiceDefinition.builder(service.getServiceDescriptor().getName());
        for (ServerMethodDefinition<?, ?> m : service.getMethods()) {
            b.addMethod(guard(m));
        }
        return b.build();
    }

    private static <Q, R> ServerMethodDefinition<Q, R> guard(ServerMethodDefinition<Q, R> m) {
        MethodDescriptor<Q, R> md = m.getMethodDescriptor();
        MethodDescriptor<Q, R> lenient = md.toBuilder()
                .setRequestMarshaller(new Lenient<>(md.getRequestMarshaller(), md.getFullMethodName()))
                .build();
        ServerCallHandler<Q, R> inner = m.getServerCallHandler();
        ServerCallHandler<Q, R> handler = (call, headers) -> new Guard<>(call, inner.startCall(call, headers));
        return ServerMethodDefinition.create(lenient, handler);
    }

    private record Lenient<Q>(MethodDescriptor.Marshaller<Q> delegate, String method)
            implements MethodDescriptor.Marshaller<Q> {
        @Override
        public InputStream stream(Q value) {
            return delegate.stream(value);
        }

        @Override
        public Q parse(InputStream stream) {
            try {
                return delegate.parse(stream);
            } catch (RuntimeException e) {
                Throwable cause = e.getCause() != null ? e.getCause() : e;
                LAST_FAILURE.set("malformed " + method + " request: " + cause.getMessage());
                return null;
            }
        }
    }

    private static final class Guard<Q, R> extends ForwardingServerCallListener.SimpleForwardingServerCallListener<Q> {
        private final ServerCall<Q, R> call;
        private boolean rejected;

        Guard(ServerCall<Q, R> call, ServerCall.Listener<Q> delegate) {
            super(delegate);
            this.call = call;
        }

        @Override
        public void onMessage(Q message) {
            if (rejected) {
                return;
            }
            if (message == null) {
                rejected = true;
                String why = LAST_FAILURE.get();
                LAST_FAILURE.remove();
                call.close(
                        Status.INVALID_ARGUMENT.withDescription(why == null ? "malformed request" : why),
                        new Metadata());
                return;
            }
            super.onMessage(message);
        }

        @Override
        public void onHalfClose() {
            if (!rejected) {
                super.onHalfClose();
            }
        }

        @Override
        public void onReady() {
            if (!rejected) {
                super.onReady();
            }
        }
    }
}
