package io.rdma4j.rendezvous.internal;

import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.stub.StreamObserver;
import io.rdma4j.rendezvous.RendezvousException;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.util.function.Supplier;

/** Server-side call plumbing: answers with the body's result or a precise status, never an unhandled exception. */
final class Calls {
    private static final SecureRandom RANDOM = new SecureRandom();

    private Calls() {}

    /** Answers {@code out} with {@code body}'s result or error. @return the status code answered, for metrics */
    static <R> Status.Code unary(StreamObserver<R> out, Supplier<R> body) {
        R result;
        try {
            result = body.get();
        } catch (StatusRuntimeException e) {
            out.onError(e);
            return e.getStatus().getCode();
        } catch (RendezvousException e) {
            out.onError(
                    Status.fromCode(e.code()).withDescription(e.getMessage()).asRuntimeException());
            return e.code();
        } catch (IllegalArgumentException e) {
            out.onError(Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException());
            return Status.Code.INVALID_ARGUMENT;
        } catch (RuntimeException e) {
            out.onError(Status.INTERNAL.withDescription(e.toString()).asRuntimeException());
            return Status.Code.INTERNAL;
        }
        out.onNext(result);
        out.onCompleted();
        return Status.Code.OK;
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
