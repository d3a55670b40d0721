package io.rdma4j.rendezvous.internal;

import io.grpc.MethodDescriptor;
import java.io.ByteArrayInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/** Messages as their bytes, unparsed: for calls that forward, echo or forge the contract's messages. */
public final class RawBytes {
    /** A marshaller that passes a message's bytes through as they are. */
    public static final MethodDescriptor.Marshaller<byte[]> MARSHALLER = new MethodDescriptor.Marshaller<>() {
        @Override
        public InputStream stream(byte[] value) {
            return new ByteArrayInputStream(value);
        }

        @Override
        public byte[] parse(InputStream stream) {
            try {
                return stream.readAllBytes();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    };

    private RawBytes() {}
}
