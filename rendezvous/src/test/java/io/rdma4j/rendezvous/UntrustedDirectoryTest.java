package io.rdma4j.rendezvous;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.ByteString;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.inprocess.InProcessServerBuilder;
import io.grpc.stub.StreamObserver;
import io.rdma4j.proto.v1.DirectoryGrpc;
import io.rdma4j.proto.v1.LookupRequest;
import io.rdma4j.proto.v1.LookupResponse;
import io.rdma4j.proto.v1.ResolveRequest;
import io.rdma4j.proto.v1.ResolveResponse;
import io.rdma4j.rendezvous.internal.Wire;
import org.junit.jupiter.api.Test;

/**
 * A directory that sends malformed answers (fault injection): clients reject them with a clear error instead of passing
 * them on.
 */
class UntrustedDirectoryTest {
    private static final class LyingDirectory extends DirectoryGrpc.DirectoryImplBase {
        @Override
        public void resolve(ResolveRequest request, StreamObserver<ResolveResponse> out) {
            var peer = Wire.toProto(Fixtures.peer(request.getName(), 1)).toBuilder();
            peer.setLanes(0, peer.getLanes(0).toBuilder().setEndpoint(ByteString.copyFrom(new byte[27])));
            out.onNext(ResolveResponse.newBuilder().setPeer(peer).build());
            out.onCompleted();
        }

        @Override
        public void lookup(LookupRequest request, StreamObserver<LookupResponse> out) {
            var b = Wire.toProto(Fixtures.buffer(request.getName(), 1)).toBuilder()
                    .setLength(0);
            out.onNext(LookupResponse.newBuilder().setBuffer(b).build());
            out.onCompleted();
        }
    }

    @Test
    void rejectsMalformedPeersAndBuffersFromTheDirectory() throws Exception {
        String name = Fixtures.uniqueName("liar");
        Server liar = InProcessServerBuilder.forName(name)
                .addService(new LyingDirectory())
                .build()
                .start();
        try (Rendezvous r = Fixtures.client("inproc:" + name, Security.none())) {
            RendezvousException peer = assertThrows(RendezvousException.class, () -> r.resolve("victim"));
            assertEquals(Status.Code.INVALID_ARGUMENT, peer.code());
            assertTrue(
                    peer.getMessage().contains("sent a malformed peer victim")
                            && peer.getMessage().contains("28-byte QPInfo"),
                    peer.getMessage());
            RendezvousException buffer = assertThrows(RendezvousException.class, () -> r.lookup("weights"));
            assertTrue(buffer.getMessage().contains("length must be > 0"), buffer.getMessage());
        } finally {
            liar.shutdownNow();
        }
    }
}
