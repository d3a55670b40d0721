package io.rdma4j.nvmeof.tcp;

import io.rdma4j.nvmeof.NvmeConnectionException;
import java.io.IOException;
import java.lang.foreign.Arena;
import java.lang.foreign.MemorySegment;
import java.lang.foreign.ValueLayout;

/**
 * The ICReq/ICResp exchange on a {@link NativeSocket}, before a polled queue exists: the ICReq out, the answer read in
 * whole within the connect deadline and checked as {@link Handshake#accept} checks it for the threaded queue.
 */
final class NativeHandshake {
    private static final ValueLayout.OfByte B = ValueLayout.JAVA_BYTE;

    private NativeHandshake() {}

    /** @return the target's ICResp, checked against what {@code config} asked for */
    static Pdu.IcResp exchange(NativeSocket s, String name, TcpQueue.Config config, long deadline) throws IOException {
        Pdu.IcReq req = new Pdu.IcReq(0, 0, config.headerDigest(), config.dataDigest(), 0);
        byte[] out = PduCodec.encode(req, PduCodec.Settings.INITIAL);
        try (Arena a = Arena.ofConfined()) {
            MemorySegment buf = a.allocate(256, 8);
            MemorySegment.copy(out, 0, buf, B, 0, out.length);
            MemorySegment iov = a.allocate(NativeSocket.IOVEC, 8);
            long sent = 0;
            while (sent < out.length) {
                iov.set(ValueLayout.JAVA_LONG, 0, buf.address() + sent);
                iov.set(ValueLayout.JAVA_LONG, 8, out.length - sent);
                long n = s.send(iov.address(), 1);
                sent += n;
                if (n == 0) {
                    waitFor(s, NativeSocket.POLLOUT, deadline, name, "ICReq");
                }
            }
            byte[] in = receiveExactly(s, a, buf, PduCodec.COMMON_HEADER, deadline, name);
            if (in == null) {
                return Handshake.accept(null, name, config.headerDigest(), config.dataDigest());
            }
            PduCodec.Header ch = PduCodec.checkCommonHeader(in, PduCodec.Settings.INITIAL, PduCodec.MAX_TERM_DATA);
            byte[] rest = receiveExactly(s, a, buf, ch.plen() - PduCodec.COMMON_HEADER, deadline, name);
            if (rest == null) {
                throw new NvmeConnectionException(name + ": the target closed the connection inside its ICResp");
            }
            byte[] whole = new byte[ch.plen()];
            System.arraycopy(in, 0, whole, 0, in.length);
            System.arraycopy(rest, 0, whole, in.length, rest.length);
            Pdu p = PduCodec.decode(whole, PduCodec.Settings.INITIAL, PduCodec.MAX_TERM_DATA);
            return Handshake.accept(p, name, config.headerDigest(), config.dataDigest());
        }
    }

    /** @return {@code n} bytes (at most 256), or null when the connection ended before the first */
    private static byte[] receiveExactly(NativeSocket s, Arena a, MemorySegment buf, int n, long deadline, String name)
            throws IOException {
        int got = 0;
        while (got < n) {
            long r = s.receive(buf.address() + got, n - got);
            if (r < 0) {
                if (got == 0) {
                    return null;
                }
                throw new NvmeConnectionException(name + ": the target closed the connection inside its ICResp");
            }
            got += (int) r;
            if (r == 0) {
                waitFor(s, NativeSocket.POLLIN, deadline, name, "ICResp");
            }
        }
        return buf.asSlice(0, n).toArray(B);
    }

    private static void waitFor(NativeSocket s, short events, long deadline, String name, String what)
            throws IOException {
        long left = deadline - System.nanoTime();
        if (left <= 0 || !s.await(events, (int) Math.max(1, Math.min(Integer.MAX_VALUE, left / 1_000_000)))) {
            throw new NvmeConnectionException(
                    name + ": no " + what + " within the connect timeout: is this an NVMe/TCP target?");
        }
    }
}
