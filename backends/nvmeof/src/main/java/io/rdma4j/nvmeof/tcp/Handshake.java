package io.rdma4j.nvmeof.tcp;

import io.rdma4j.nvmeof.NvmeConnectionException;
import io.rdma4j.nvmeof.NvmeProtocolException;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.nio.channels.SocketChannel;

/**
 * The connection's set-up, before any command: connecting the socket and the ICReq/ICResp exchange that negotiates
 * digests, the host-to-controller data alignment (CPDA) and MAXH2CDATA. It owns the socket until it returns it: every
 * failure on the way closes it. The result is what the receiver and the sender of the connection are built from.
 *
 * @param rx how PDUs from the target are framed (digests as agreed, no alignment)
 * @param tx how PDUs to the target are framed (digests as agreed, CPDA)
 * @param maxH2CData MAXH2CDATA from the ICResp
 */
record Handshake(Socket socket, SocketChannel channel, PduCodec.Settings rx, PduCodec.Settings tx, long maxH2CData) {

    /** Connects through {@code connector} and initializes the NVMe/TCP connection (ICReq/ICResp). */
    static Handshake open(
            InetSocketAddress address, String name, TcpQueue.Config config, TcpQueue.Connector connector) {
        Socket s;
        try {
            s = connector.connect(address, config.connectTimeout());
        } catch (IOException e) {
            throw new NvmeConnectionException(
                    "cannot connect to NVMe/TCP target " + address + ": " + e.getMessage()
                            + " (is the target listening there? the default port is 4420)",
                    e);
        }
        SocketChannel ch = s.getChannel();
        if (ch == null) {
            closeQuietly(s);
            throw new IllegalArgumentException(
                    "the connector returned a socket without a channel: create it with SocketChannel.open().socket()");
        }
        try {
            Pdu.IcResp resp = exchange(s, name, config);
            s.setSoTimeout(0);
            PduCodec.Settings rx = new PduCodec.Settings(resp.headerDigest(), resp.dataDigest(), 0);
            PduCodec.Settings tx = new PduCodec.Settings(resp.headerDigest(), resp.dataDigest(), resp.cpda());
            return new Handshake(s, ch, rx, tx, resp.maxH2CData());
        } catch (IOException e) {
            closeQuietly(s);
            throw new NvmeConnectionException(name + ": connection lost during ICReq/ICResp: " + e.getMessage(), e);
        } catch (RuntimeException e) {
            closeQuietly(s);
            throw e;
        }
    }

    /** Sends the ICReq and checks the ICResp against what was asked. */
    private static Pdu.IcResp exchange(Socket s, String name, TcpQueue.Config config) throws IOException {
        // The ICReq/ICResp exchange goes through the socket's own streams, unbuffered, which honour the timeout.
        s.setSoTimeout((int)
                Math.max(1, Math.min(Integer.MAX_VALUE, config.connectTimeout().toMillis())));
        InputStream in = s.getInputStream();
        OutputStream out = s.getOutputStream();
        Pdu.IcReq req = new Pdu.IcReq(0, 0, config.headerDigest(), config.dataDigest(), 0);
        out.write(PduCodec.encode(req, PduCodec.Settings.INITIAL));
        out.flush();
        PduReader r = new PduReader(in, 0);
        Pdu p;
        try {
            p = r.read();
        } catch (SocketTimeoutException e) {
            throw new NvmeConnectionException(
                    name + ": no ICResp within " + config.connectTimeout().toMillis()
                            + " ms of the ICReq: is this an NVMe/TCP target?",
                    e);
        }
        return accept(p, name, config.headerDigest(), config.dataDigest());
    }

    /**
     * Checks the target's answer to the ICReq (null: the connection closed) against what was asked.
     *
     * @return the ICResp
     */
    static Pdu.IcResp accept(Pdu p, String name, boolean headerDigest, boolean dataDigest) {
        if (p == null) {
            throw new NvmeConnectionException(
                    name + ": the target closed the connection instead of answering the ICReq");
        }
        if (p instanceof Pdu.TermReq t) {
            throw new NvmeProtocolException(name + ": the target refused the ICReq with " + t.fesName());
        }
        if (!(p instanceof Pdu.IcResp resp)) {
            throw new NvmeProtocolException(name + ": expected ICResp after ICReq, got " + Pdu.typeName(p.type()));
        }
        if (resp.pfv() != 0) {
            throw new NvmeProtocolException(name + ": ICResp has PDU format version " + resp.pfv() + "; only 0 exists");
        }
        if ((resp.headerDigest() && !headerDigest) || (resp.dataDigest() && !dataDigest)) {
            throw new NvmeProtocolException(name + ": ICResp enables a digest this host did not ask for");
        }
        if (resp.cpda() > 31) {
            throw new NvmeProtocolException(name + ": ICResp CPDA " + resp.cpda() + " is outside 0..31");
        }
        if (resp.maxH2CData() < 4096 || resp.maxH2CData() % 4 != 0) {
            throw new NvmeProtocolException(
                    name + ": ICResp MAXH2CDATA " + resp.maxH2CData() + " is below 4096 or not a multiple of 4");
        }
        return resp;
    }

    static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing a broken socket: nothing left to report
        }
    }
}
