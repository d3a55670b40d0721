package io.rdma4j.nvmeof.tcp;

import io.rdma4j.nvmeof.NvmeProtocolException;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;

/**
 * Reads PDUs one at a time from a byte stream. The common header is validated before the rest is read, so a hostile
 * PLEN never sizes an allocation beyond the connection's limit; a stream that ends inside a PDU is a truncated PDU. It
 * allocates each PDU: {@link TcpQueue} uses it for the ICResp only and parses every later PDU in place.
 */
public final class PduReader {
    private final InputStream in;
    private final byte[] ch = new byte[PduCodec.COMMON_HEADER];
    private volatile PduCodec.Settings settings = PduCodec.Settings.INITIAL;
    private volatile int maxData;

    /** @param maxData largest data one PDU may carry */
    public PduReader(InputStream in, int maxData) {
        this.in = in;
        this.maxData = maxData;
    }

    /** Applies the outcome of the ICReq/ICResp exchange to every PDU read afterwards. */
    public void settings(PduCodec.Settings settings, int maxData) {
        this.settings = settings;
        this.maxData = maxData;
    }

    /**
     * @return the next PDU, or null when the stream ended cleanly between PDUs
     * @throws NvmeProtocolException for a malformed or truncated PDU
     */
    public Pdu read() throws IOException {
        int n = in.readNBytes(ch, 0, ch.length);
        if (n == 0) {
            return null;
        }
        if (n < ch.length) {
            throw new NvmeProtocolException(
                    "truncated PDU: the connection ended after " + n + " bytes of an 8-byte common header");
        }
        PduCodec.Settings s = settings;
        PduCodec.Header h = PduCodec.checkCommonHeader(ch, s, maxData);
        byte[] b = new byte[h.plen()];
        System.arraycopy(ch, 0, b, 0, ch.length);
        int got = in.readNBytes(b, ch.length, b.length - ch.length);
        if (got < b.length - ch.length) {
            throw new NvmeProtocolException(
                    "truncated " + Pdu.typeName(h.type()) + ": PLEN is " + h.plen() + " but the connection ended after "
                            + (ch.length + got) + " bytes",
                    new EOFException());
        }
        return PduCodec.decodeBody(h, b, s);
    }
}
