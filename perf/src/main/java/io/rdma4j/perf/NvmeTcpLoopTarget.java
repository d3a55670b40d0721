package io.rdma4j.perf;

import java.io.IOException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.util.zip.CRC32C;

/**
 * A minimal NVMe/TCP peer on loopback for {@link NvmeTcpQueueBench}: it answers the ICReq, then every Read with one
 * C2HData carrying the SUCCESS flag, every in-capsule Write with a CapsuleResp, and every other Write with one R2T for
 * the whole transfer and a CapsuleResp once the H2CData arrived. It keeps no data and allocates nothing per command
 * (reused direct buffers, one CRC32C), so a {@code -prof gc} run charges the initiator alone. It trusts its peer: it is a
 * benchmark fixture, not a target (the real one is Linux nvmet in the test VM).
 */
final class NvmeTcpLoopTarget implements AutoCloseable {
    private static final int CAPSULE_CMD = 4, CAPSULE_RESP = 5, H2C_DATA = 6, C2H_DATA = 7, R2T = 9;
    private static final int OPC_READ = 2, SGL_IN_CAPSULE = 0x01;

    private final ServerSocketChannel server;
    private final ByteBuffer in = ByteBuffer.allocateDirect(256).order(ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer out = ByteBuffer.allocateDirect(256).order(ByteOrder.LITTLE_ENDIAN);
    private final ByteBuffer payload;
    private final ByteBuffer sink;
    private final ByteBuffer[] gather = new ByteBuffer[3];
    private final ByteBuffer digest = ByteBuffer.allocateDirect(4).order(ByteOrder.LITTLE_ENDIAN);
    private final CRC32C crc = new CRC32C();
    private final Thread thread;
    private boolean hdgst;
    private boolean ddgst;
    private volatile SocketChannel conn;

    NvmeTcpLoopTarget(int maxData) throws IOException {
        server = ServerSocketChannel.open().bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
        payload = ByteBuffer.allocateDirect(maxData);
        for (int i = 0; i < maxData; i++) {
            payload.put(i, (byte) (i * 31 + 7));
        }
        sink = ByteBuffer.allocateDirect(maxData + 8);
        thread = Thread.ofPlatform().daemon().name("nvme-loop-target").start(this::serve);
    }

    InetSocketAddress address() throws IOException {
        return (InetSocketAddress) server.getLocalAddress();
    }

    private void serve() {
        try (SocketChannel c = server.accept()) {
            conn = c;
            c.setOption(StandardSocketOptions.TCP_NODELAY, true);
            readFully(c, in.clear().limit(128));
            int dgst = in.get(11) & 3;
            hdgst = (dgst & 1) != 0;
            ddgst = (dgst & 2) != 0;
            out.clear();
            for (int i = 0; i < 128; i++) {
                out.put(i, (byte) 0);
            }
            out.put(0, (byte) 1).put(2, (byte) 128).putInt(4, 128).put(11, (byte) dgst).putInt(12, 131072);
            writeFully(c, out.limit(128));
            long expectH2C = 0;
            int writeCid = -1;
            while (true) {
                if (!readFully(c, in.clear().limit(8))) {
                    return;
                }
                int type = in.get(0) & 0xff;
                int flags = in.get(1) & 0xff;
                int hlen = in.get(2) & 0xff;
                int plen = in.getInt(4);
                int hd = (flags & 1) != 0 ? 4 : 0;
                readFully(c, in.limit(hlen + hd));
                int rest = plen - hlen - hd;
                if (rest > 0) {
                    readFully(c, sink.clear().limit(rest));
                }
                if (type == CAPSULE_CMD) {
                    int opcode = in.get(8) & 0xff;
                    int cid = in.getShort(10) & 0xffff;
                    int length = in.getInt(8 + 32);
                    int sglId = in.get(8 + 39) & 0xff;
                    if (opcode == OPC_READ) {
                        c2h(c, cid, length);
                    } else if (sglId == SGL_IN_CAPSULE || length == 0) {
                        resp(c, cid);
                    } else {
                        writeCid = cid;
                        expectH2C = length;
                        r2t(c, cid, length);
                    }
                } else if (type == H2C_DATA) {
                    int datal = in.getInt(16);
                    expectH2C -= datal;
                    if (expectH2C == 0) {
                        resp(c, writeCid);
                    }
                } else {
                    return; // a TermReq or anything else: the bench is over
                }
            }
        } catch (IOException e) {
            // the initiator closed the connection: the trial is over
        }
    }

    private void header(int type, int flags, int hlen, int pdo, int plen) {
        out.clear();
        for (int i = 0; i < hlen; i++) {
            out.put(i, (byte) 0);
        }
        out.put(0, (byte) type).put(1, (byte) (flags | (hdgst ? 1 : 0))).put(2, (byte) hlen).put(3, (byte) pdo).putInt(4, plen);
    }

    private void finishHeader(SocketChannel c, int hlen, ByteBuffer data) throws IOException {
        int n = hlen;
        if (hdgst) {
            crc.reset();
            crc.update(out.limit(hlen).position(0));
            out.limit(hlen + 4).putInt(hlen, (int) crc.getValue());
            n += 4;
        }
        out.position(0).limit(n);
        if (data == null) {
            writeFully(c, out);
            return;
        }
        gather[0] = out;
        gather[1] = data;
        int parts = 2;
        if (ddgst) {
            crc.reset();
            crc.update(data.duplicate());
            digest.clear().putInt(0, (int) crc.getValue());
            gather[2] = digest;
            parts = 3;
        }
        long left = n + data.remaining() + (ddgst ? 4 : 0);
        while (left > 0) {
            left -= c.write(gather, 0, parts);
        }
    }

    private void c2h(SocketChannel c, int cid, int length) throws IOException {
        int pdo = 24 + (hdgst ? 4 : 0);
        header(C2H_DATA, 0x04 | 0x08 | (ddgst ? 2 : 0), 24, pdo, pdo + length + (ddgst ? 4 : 0));
        out.putShort(8, (short) cid).putInt(12, 0).putInt(16, length);
        finishHeader(c, 24, payload.clear().limit(length));
    }

    private void resp(SocketChannel c, int cid) throws IOException {
        header(CAPSULE_RESP, 0, 24, 0, 24 + (hdgst ? 4 : 0));
        out.putShort(8 + 12, (short) cid);
        finishHeader(c, 24, null);
    }

    private void r2t(SocketChannel c, int cid, int length) throws IOException {
        header(R2T, 0, 24, 0, 24 + (hdgst ? 4 : 0));
        out.putShort(8, (short) cid).putShort(10, (short) 1).putInt(12, 0).putInt(16, length);
        finishHeader(c, 24, null);
    }

    private static boolean readFully(SocketChannel c, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            if (c.read(b) < 0) {
                return false;
            }
        }
        return true;
    }

    private static void writeFully(SocketChannel c, ByteBuffer b) throws IOException {
        while (b.hasRemaining()) {
            c.write(b);
        }
    }

    @Override
    public void close() throws IOException {
        server.close();
        SocketChannel c = conn;
        if (c != null) {
            c.close();
        }
        try {
            thread.join(2000);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
