package io.rdma4j.rendezvous.internal;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.rdma4j.rendezvous.RendezvousException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.function.Consumer;
import java.util.function.Supplier;

/** Server-side call plumbing: answers with the body's result or a precise status, never an unhandled exception. */
final class Calls {
    private static final SecureRandom RANDOM = new SecureRandom();

    private Calls() {}

    static <R> void unary(StreamObserver<R> out, Supplier<R> body) {
        unary(out, body, code -> {});
    }

    /**
     * Answers {@code out} with {@code body}'s result or error, telling {@code outcome} the status first (so a caller
     * that has its answer sees the metrics count it).
     */
    static <R> void unary(StreamObserver<R> out, Supplier<R> body, Consumer<Status.Code> outcome) {
        R result = null;
        StatusRuntimeException error = null;
        try {
            result = body.get();
        } catch (StatusRuntimeException e) {
            error = e;
        } catch (RendezvousException e) {
            error = Status.fromCode(e.code()).withDescription(e.getMessage()).asRuntimeException();
        } catch (IllegalArgumentException e) {
            error = Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException();
        } catch (RuntimeException e) {
            error = Status.INTERNAL.withDescription(e.toString()).asRuntimeException();
        }
        if (error != null) {
            outcome.accept(error.getStatus().getCode());
            out.onError(error);
            return;
        }
        outcome.accept(Status.Code.OK);
        out.onNext(result);
        out.onCompleted();
    }

    static byte[] newToken() {
        byte[] t = new byte[Validation.TOKEN_BYTES];
        RANDOM.nextBytes(t);
        return t;
    }

    static boolean tokenMatches(byte[] expected, ByteString given) {
        return MessageDigest.isEqual(expected, given.toByteArray());
    }
}
