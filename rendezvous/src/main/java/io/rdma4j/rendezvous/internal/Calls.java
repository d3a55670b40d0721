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

    static <R> void unary(StreamObserver<R> out, Supplier<R> body) {
        R result;
        try {
            result = body.get();
        } catch (StatusRuntimeException e) {
            out.onError(e);
            return;
        } catch (RendezvousException e) {
            out.onError(
                    Status.fromCode(e.code()).withDescription(e.getMessage()).asRuntimeException());
            return;
        } catch (IllegalArgumentException e) {
            out.onError(Status.INVALID_ARGUMENT.withDescription(e.getMessage()).asRuntimeException());
            return;
        } catch (RuntimeException e) {
            out.onError(Status.INTERNAL.withDescription(e.toString()).asRuntimeException());
            return;
        }
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
